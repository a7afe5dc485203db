// pocket::rms_norm, rope and swiglu, AVX2 + FMA (x86-64), 8 floats at a time with masked
// tails. rms_norm sums squares in double (4 lanes per half vector; the portable kernel's
// order differs, its double sum does not change the float scale but in rare last-bit
// cases); swiglu computes sigmoid(g) as 1 / (1 + e) for g >= 0 and e / (1 + e) for g < 0
// with e = exp(-|g|) (exp_nonpositive: under 2 ulp), so no exponential overflows.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

POCKET_TARGET void rms_norm_rows_avx2(const RmsNormArgs& a, int64_t r0, int64_t r1) {
  const int64_t d = a.d;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = a.x + r * d;
    float* y = a.y + r * d;
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      acc0 = _mm256_fmadd_pd(lo, lo, acc0);  // exact products of floats: fma or not, the same
      acc1 = _mm256_fmadd_pd(hi, hi, acc1);
    }
    const __m256d acc = _mm256_add_pd(acc0, acc1);
    __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd(acc, 1));
    double ss = _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
    for (; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + a.eps);
    const __m256 sv = _mm256_set1_ps(scale);
    for (i = 0; i < d; i += 8) {
      if (i + 8 <= d) {
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), _mm256_loadu_ps(a.w + i)));
      } else {
        const __m256i m = tail_mask(d - i);
        const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_maskload_ps(x + i, m), sv), _mm256_maskload_ps(a.w + i, m));
        _mm256_maskstore_ps(y + i, m, v);
      }
    }
  }
}

POCKET_TARGET void rope_rows_avx2(const RopeArgs& a, int64_t r0, int64_t r1) {
  const int64_t D = a.D, h = D / 2;
  for (int64_t r = r0; r < r1; ++r) {  // r = (b * T + t) * H + head
    const float* x = a.x + r * D;
    const float* c = a.cos + (r / a.H % a.T) * D;
    const float* s = a.sin + (r / a.H % a.T) * D;
    float* y = a.y + r * D;
    for (int64_t i = 0; i < h; i += 8) {
      const __m256i m = tail_mask(h - i < 8 ? h - i : 8);
      const __m256 lo = _mm256_maskload_ps(x + i, m), hi = _mm256_maskload_ps(x + i + h, m);
      const __m256 y0 = _mm256_sub_ps(_mm256_mul_ps(lo, _mm256_maskload_ps(c + i, m)),
                                      _mm256_mul_ps(hi, _mm256_maskload_ps(s + i, m)));
      const __m256 y1 = _mm256_add_ps(_mm256_mul_ps(hi, _mm256_maskload_ps(c + i + h, m)),
                                      _mm256_mul_ps(lo, _mm256_maskload_ps(s + i + h, m)));
      _mm256_maskstore_ps(y + i, m, y0);
      _mm256_maskstore_ps(y + i + h, m, y1);
    }
  }
}

POCKET_TARGET inline __m256 swiglu8(__m256 g, __m256 up) {
  const __m256 e = exp_nonpositive(_mm256_or_ps(g, _mm256_set1_ps(-0.0f)));  // exp(-|g|)
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 num = _mm256_blendv_ps(one, e, g);  // sign bit of g set: e
  const __m256 sig = _mm256_div_ps(num, _mm256_add_ps(one, e));
  return _mm256_mul_ps(_mm256_mul_ps(g, sig), up);
}

POCKET_TARGET void swiglu_range_avx2(const SwigluArgs& a, int64_t i0, int64_t i1) {
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8)
    _mm256_storeu_ps(a.y + i, swiglu8(_mm256_loadu_ps(a.gate + i), _mm256_loadu_ps(a.up + i)));
  if (i < i1) {
    const __m256i m = tail_mask(i1 - i);
    _mm256_maskstore_ps(a.y + i, m, swiglu8(_mm256_maskload_ps(a.gate + i, m), _mm256_maskload_ps(a.up + i, m)));
  }
}

}  // namespace

extern const LlmKernels kLlmF32Avx2 = {rms_norm_rows_avx2, rope_rows_avx2, swiglu_range_avx2};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
