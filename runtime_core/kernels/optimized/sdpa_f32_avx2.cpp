// pocket::sdpa, AVX2 + FMA (x86-64): the query rows of sdpa_f32_tile.inc over 8-float vectors
// (exp by range reduction to [-ln2/2, ln2/2] and a degree-6 polynomial: under 2 ulp relative
// error on the softmax's range x <= 0), and the float16 caches' widening (F16C).
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

// The sdpa loop's traits (sdpa_f32_tile.inc): the AVX2 fp32 vector traits and exp.
struct Avx2Sdpa : Avx2F32 {
  static constexpr bool kFetchV = true;
  POCKET_TARGET static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  POCKET_TARGET static V set1(float x) { return _mm256_set1_ps(x); }
  POCKET_TARGET static float hsum(V v) { return detail::hsum(v); }
  POCKET_TARGET static V exp(V x) { return exp_nonpositive(x); }
};

}  // namespace

#include "sdpa_f32_tile.inc"

namespace {

// float16 -> float32 with F16C (exact, as half_to_float).
__attribute__((target("avx2,f16c"))) void widen_half(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  if (i < n) {
    uint16_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float out[8];
    for (int64_t j = i; j < n; ++j) tail[j - i] = src[j];
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tail))));
    for (int64_t j = i; j < n; ++j) dst[j] = out[j - i];
  }
}

}  // namespace

extern const SdpaRowsFn kSdpaAvx2 = sdpa_rows<Avx2Sdpa>;
extern const WidenHalfFn kWidenHalfAvx2 = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
