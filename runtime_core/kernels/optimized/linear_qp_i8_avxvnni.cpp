// pocket::linear_q_packed microkernels, AVX-VNNI (x86-64 without AVX-512: Alder Lake and later
// client cores): a block of 16 channels is two vectors; the VEX-encoded VPDPBUSD multiplies
// unsigned weight operands (nibbles; bytes, symmetric ones + 128) by 4 broadcast signed
// activation bytes per lane, as the AVX-512 VNNI file's on 256 bits. Tile and block loop:
// linear_qp_tile.inc; the weight loads and the float side: avx2_helpers.inc's Avx2Qp; the row
// quantization: the AVX2 file's.
#include "ukernels.h"
#if defined(__x86_64__) && POCKET_HAVE_AVXVNNI

#include <immintrin.h>

#include <cstring>

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avxvnni")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

struct AvxVnni : Avx2Qp<AvxVnni> {
  static constexpr int kMr = 4;
  template <int Fmt>  // symmetric bytes + 128 (xor 0x80): VPDPBUSD's unsigned operand
  static constexpr bool flip() {
    return !qp_asym(Fmt);
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? 0 : 128);
  }
  template <int Fmt>
  POCKET_TARGET static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) {
    return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, lo, xa), hi, xb);
  }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8AvxVnni = {linear_qp_run<AvxVnni>, linear_qp_quantize_row_avx2};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__ && POCKET_HAVE_AVXVNNI
