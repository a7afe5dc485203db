// pocket::sdpa, AVX2 + FMA (x86-64): the query rows of sdpa_f32_tile.inc over 8-float vectors
// (exp by range reduction to [-ln2/2, ln2/2] and a degree-6 polynomial: under 2 ulp relative
// error on the softmax's range x <= 0), float16 caches widened per load (F16C).
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>
#include <type_traits>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c")))

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
  POCKET_TARGET static V load_half(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  POCKET_TARGET static V loadn_half(const uint16_t* p, int n) {
    alignas(16) uint16_t part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; ++i) part[i] = p[i];
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(part)));
  }
};

}  // namespace

#include "sdpa_f32_tile.inc"

extern const SdpaRowsFn kSdpaAvx2 = sdpa_rows<Avx2Sdpa, float>;
extern const SdpaRowsHalfFn kSdpaHalfAvx2 = sdpa_rows<Avx2Sdpa, uint16_t>;

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
