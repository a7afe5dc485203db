// pocket::linear_q_packed microkernels, AVX-512 VNNI (x86-64): a block of 16 channels is one
// vector; VPDPBUSD multiplies unsigned weight operands (nibbles; bytes, symmetric ones + 128)
// by 4 broadcast signed activation bytes per lane. Tile and block loop: linear_qp_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace pocket {
namespace detail {

namespace {

struct Vnni {
  using Acc = __m512i;
  using W = __m512i;
  using B = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16, kMr = 4;
  POCKET_TARGET static Acc zero() { return _mm512_setzero_si512(); }
  POCKET_TARGET static F fzero() { return _mm512_setzero_ps(); }
  template <int Fmt>
  POCKET_TARGET static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
    const __m512i va = _mm512_loadu_si512(a);
    if constexpr (qp_bits(Fmt) == 4) {
      const __m512i mask = _mm512_set1_epi8(0x0F);
      *wa = _mm512_and_si512(va, mask);
      *wb = _mm512_and_si512(_mm512_srli_epi16(va, 4), mask);
    } else {
      const __m512i flip = _mm512_set1_epi8(qp_asym(Fmt) ? 0 : static_cast<char>(0x80));
      *wa = _mm512_xor_si512(va, flip);
      *wb = _mm512_xor_si512(_mm512_loadu_si512(b), flip);
    }
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? 0 : 128);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm512_set1_epi32(q);
  }
  template <int Fmt>
  POCKET_TARGET static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc, lo, xa), hi, xb);
  }
  POCKET_TARGET static F fload(const float* p) { return _mm512_loadu_ps(p); }
  POCKET_TARGET static F hload(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  POCKET_TARGET static F fset(float v) { return _mm512_set1_ps(v); }
  POCKET_TARGET static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  POCKET_TARGET static F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
  POCKET_TARGET static void fstore(float* p, F v) { _mm512_storeu_ps(p, v); }
  POCKET_TARGET static F cvt(Acc acc, int32_t sub) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_set1_epi32(sub)));
  }
};

// quantize_row's operations (qp_quantize_row in linear_qp_tile.inc), 16 values at a time,
// masked past the end: VMAXPS keeps its second operand when the first is a NaN; the clamp's
// VMAXPS turns a NaN into -127; VCVTPS2DQ rounds to nearest even; a saturating narrow stores.
struct Avx512Row {
  using M = __m512;
  using S = __m512i;
  static constexpr int64_t kQ = 16;
  POCKET_TARGET static __mmask16 mask(int64_t left) {
    return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
  }
  POCKET_TARGET static M mzero() { return _mm512_setzero_ps(); }
  POCKET_TARGET static M amax(M m, const float* x, int64_t left) {
    return _mm512_max_ps(_mm512_abs_ps(_mm512_maskz_loadu_ps(mask(left), x)), m);
  }
  POCKET_TARGET static float max_of(M m) { return _mm512_reduce_max_ps(m); }
  POCKET_TARGET static void quantize(const float* x, int64_t left, float inv, int8_t* out) {
    const __mmask16 k = mask(left);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x), _mm512_set1_ps(inv));
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
    _mm512_mask_cvtsepi32_storeu_epi8(out, k, _mm512_cvtps_epi32(c));
  }
  POCKET_TARGET static S szero() { return _mm512_setzero_si512(); }
  POCKET_TARGET static S sum(S t, const int8_t* q, int64_t left) {
    return _mm512_add_epi32(t, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask(left), q)));
  }
  POCKET_TARGET static int32_t sum_of(S t) { return _mm512_reduce_add_epi32(t); }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8Avx512Vnni = {linear_qp_run<Vnni>, qp_quantize_row<Avx512Row>};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
