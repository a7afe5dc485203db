// pocket::linear_q_packed microkernels, AVX-VNNI (x86-64 without AVX-512: Alder Lake and later
// client cores): a block of 16 channels is two vectors; the VEX-encoded VPDPBUSD multiplies
// unsigned weight operands (nibbles; bytes, symmetric ones + 128) by 4 broadcast signed
// activation bytes per lane, as the AVX-512 VNNI file's on 256 bits. Tile and block loop:
// linear_qp_tile.inc; the float side: avx2_helpers.inc's Avx2QpFloats; the row
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

struct AvxVnni : Avx2QpFloats {
  using Acc = __m256i;
  using W = __m256i;
  using B = __m256i;
  static constexpr int kLanes = 8, kMr = 4;
  POCKET_TARGET static Acc zero() { return _mm256_setzero_si256(); }
  template <int Fmt>
  POCKET_TARGET static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    if constexpr (qp_bits(Fmt) == 4) {
      const __m256i mask = _mm256_set1_epi8(0x0F);
      *wa = _mm256_and_si256(va, mask);
      *wb = _mm256_and_si256(_mm256_srli_epi16(va, 4), mask);
    } else {
      const __m256i flip = _mm256_set1_epi8(qp_asym(Fmt) ? 0 : static_cast<char>(0x80));
      *wa = _mm256_xor_si256(va, flip);
      *wb = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)), flip);
    }
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? 0 : 128);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm256_set1_epi32(q);
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
