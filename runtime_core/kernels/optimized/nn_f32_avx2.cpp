// aten::native_layer_norm, _softmax and gelu rows, hardswish, hardsigmoid, sigmoid and silu,
// AVX2 + FMA (x86-64), 8 floats at a time with masked tails, and aten::permute's 3-channel
// interleave (contracts in ukernels.h, NnKernels).
//   layer_norm  mean and variance in double (4 lanes per half vector), the normalized value
//               in double, then * w + b in float (the portable kernel: all in double).
//   softmax     exp_nonpositive (under 2 ulp) of x - max, the sum in float lanes.
//   gelu        erfc(z) = t · exp(-z² - 1.26551223 + t · P(t)), t = 1 / (1 + z/2), a
//               Chebyshev fit with relative error < 1.2e-7 for every z >= 0, so
//               Phi(x) = erfc(-x/√2)/2 keeps its relative accuracy far into the negative tail
//               (where 1 + erf(x/√2) in float cancels to nothing).
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

POCKET_TARGET inline __m256 masked_load(const float* p, int64_t n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tail_mask(n));
}

POCKET_TARGET inline void masked_store(float* p, int64_t n, __m256 v) {
  if (n >= 8)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, tail_mask(n), v);
}

POCKET_TARGET inline double hsum_pd(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// ---- layer_norm

POCKET_TARGET void layer_norm_rows_avx2(const LayerNormRows& a, int64_t r0, int64_t r1) {
  const int64_t n = a.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = a.x + r * n;
    float* y = a.y + r * n;
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t i = 0; i < n; i += 8) {  // masked-off lanes load 0: they add nothing
      const __m256 v = masked_load(x + i, n - i);
      s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
      s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    const double mean = hsum_pd(_mm256_add_pd(s0, s1)) / static_cast<double>(n);
    const __m256d mv = _mm256_set1_pd(mean);
    __m256d q0 = _mm256_setzero_pd(), q1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mv);
      const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), mv);
      q0 = _mm256_fmadd_pd(d0, d0, q0);
      q1 = _mm256_fmadd_pd(d1, d1, q1);
    }
    double sq = hsum_pd(_mm256_add_pd(q0, q1));
    for (; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + a.eps);
    const __m256d rv = _mm256_set1_pd(rstd);
    for (i = 0; i < n; i += 8) {
      const int64_t left = n - i;
      const __m256 v = masked_load(x + i, left);
      const __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mv), rv));
      const __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), mv), rv));
      __m256 t = _mm256_set_m128(hi, lo);
      if (a.w != nullptr) t = _mm256_mul_ps(t, masked_load(a.w + i, left));
      if (a.b != nullptr) t = _mm256_add_ps(t, masked_load(a.b + i, left));
      masked_store(y + i, left, t);
    }
    a.mean[r] = static_cast<float>(mean);
    a.rstd[r] = static_cast<float>(rstd);
  }
}

// ---- softmax

POCKET_TARGET void softmax_rows_avx2(const float* xs, float* ys, int64_t n, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = xs + r * n;
    float* y = ys + r * n;
    __m256 mx = _mm256_set1_ps(-INFINITY), bad = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) {
      const int64_t left = n - i;
      const __m256 v = left >= 8 ? _mm256_loadu_ps(x + i)
                                 : _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(x + i, tail_mask(left)),
                                                    _mm256_castsi256_ps(tail_mask(left)));
      mx = _mm256_max_ps(mx, v);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));  // NaN
    }
    const float m = hmax(mx);  // used only without NaN lanes (bad)
    if (_mm256_movemask_ps(bad) != 0 || std::isinf(m)) {
      softmax_row_exact(x, y, n);
      continue;
    }
    const __m256 mv = _mm256_set1_ps(m);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) {
      const int64_t left = n - i;
      __m256 e = exp_nonpositive(_mm256_sub_ps(masked_load(x + i, left), mv));
      if (left < 8) e = _mm256_and_ps(e, _mm256_castsi256_ps(tail_mask(left)));
      sum = _mm256_add_ps(sum, e);
      masked_store(y + i, left, e);
    }
    const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / static_cast<double>(hsum(sum))));
    for (int64_t i = 0; i < n; i += 8) masked_store(y + i, n - i, _mm256_mul_ps(masked_load(y + i, n - i), inv));
  }
}

// ---- gelu

// e^x for x <= 0, and 0 below -87 (where exp_nonpositive stops at ~1e-38): far tails give
// zero, as the portable kernel's float arithmetic does, and -inf · 0 gives its NaN.
POCKET_TARGET inline __m256 exp_or_zero(__m256 x) {
  return _mm256_and_ps(exp_nonpositive(x), _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ));
}

// Phi(x) = P(X <= x) for a standard normal X, from erfc of |x|/√2.
POCKET_TARGET inline __m256 normal_cdf(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(0.70710678118654752f));
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(z, half, one));
  __m256 p = _mm256_set1_ps(0.17087277f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
  // exp(-z² + p): -z·z and p are both <= 0 for the z where the product matters
  const __m256 arg = _mm256_fnmadd_ps(z, z, p);
  const __m256 half_erfc = _mm256_mul_ps(_mm256_mul_ps(t, half), exp_or_zero(_mm256_min_ps(arg, _mm256_setzero_ps())));
  // x >= 0: 1 - erfc/2; x < 0: erfc/2 (the sign bit of x picks)
  return _mm256_blendv_ps(_mm256_sub_ps(one, half_erfc), half_erfc, x);
}

// sigmoid(u) from e = exp(-|u|): no exponential overflows.
POCKET_TARGET inline __m256 sigmoid(__m256 u) {
  const __m256 e = exp_or_zero(_mm256_or_ps(u, _mm256_set1_ps(-0.0f)));
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(_mm256_blendv_ps(one, e, u), _mm256_add_ps(one, e));
}

POCKET_TARGET inline __m256 gelu8(__m256 x, bool tanh) {
  if (!tanh) return _mm256_mul_ps(x, normal_cdf(x));
  // 0.5 · (1 + tanh(v)) = sigmoid(2v), v = √(2/π) · (x + 0.044715 x³)
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 v = _mm256_mul_ps(_mm256_fmadd_ps(_mm256_mul_ps(x2, x), _mm256_set1_ps(0.044715f), x),
                                 _mm256_set1_ps(2 * 0.79788456080286535588f));
  return _mm256_mul_ps(x, sigmoid(v));
}

POCKET_TARGET void gelu_range_avx2(const float* x, float* y, int64_t i0, int64_t i1, bool tanh) {
  for (int64_t i = i0; i < i1; i += 8) masked_store(y + i, i1 - i, gelu8(masked_load(x + i, i1 - i), tanh));
}

// ---- hardswish, hardsigmoid: relu6(x + 3) as max(0, r) then min(6, .); maxps and minps return
// their second operand when one is a NaN, so a NaN passes as through the portable comparisons.
POCKET_TARGET inline __m256 hard8(__m256 v, bool swish) {
  const __m256 six = _mm256_set1_ps(6.0f);
  const __m256 r = _mm256_min_ps(six, _mm256_max_ps(_mm256_setzero_ps(), _mm256_add_ps(v, _mm256_set1_ps(3.0f))));
  return _mm256_div_ps(swish ? _mm256_mul_ps(v, r) : r, six);
}

POCKET_TARGET void hard_range_avx2(const float* x, float* y, int64_t i0, int64_t i1, bool swish) {
  for (int64_t i = i0; i < i1; i += 8) masked_store(y + i, i1 - i, hard8(masked_load(x + i, i1 - i), swish));
}

// ---- sigmoid, silu: sigmoid() above, and x · sigmoid(x). sigmoid() alone would make a NaN 0 or
// 1; the product keeps it.
POCKET_TARGET inline __m256 logistic8(__m256 v, bool silu) {
  const __m256 s = sigmoid(v);
  return silu ? _mm256_mul_ps(v, s) : _mm256_blendv_ps(s, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

POCKET_TARGET void logistic_range_avx2(const float* x, float* y, int64_t i0, int64_t i1, bool silu) {
  for (int64_t i = i0; i < i1; i += 8) masked_store(y + i, i1 - i, logistic8(masked_load(x + i, i1 - i), silu));
}

// ---- the activation of a convolution's tile, in place (one branch per vector: predicted).
POCKET_TARGET void activate_rows_avx2(ConvActivation act, float* y, int64_t ldy, int64_t rows, int64_t cols) {
  const bool logistic = conv_activation_logistic(act), flag = conv_activation_times_x(act);
  for (int64_t r = 0; r < rows; ++r, y += ldy)
    for (int64_t i = 0; i < cols; i += 8) {
      const __m256 v = masked_load(y + i, cols - i);
      masked_store(y + i, cols - i, logistic ? logistic8(v, flag) : hard8(v, flag));
    }
}

// ---- interleave3: 8 pixels at a time. Each channel's 8 values are permuted so that every
// output vector takes lanes 0, 3, 6 from one channel, 1, 4, 7 from the next and 2, 5 from the
// third (two blends); the pixels past the last 8 one by one.

POCKET_TARGET void interleave3_avx2(const uint32_t* src, uint32_t* dst, int64_t plane, int64_t p0, int64_t p1) {
  const __m256i pa = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5), pb = _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2),
                pc = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  const uint32_t* r0 = src;
  const uint32_t* r1 = src + plane;
  const uint32_t* r2 = src + 2 * plane;
  int64_t p = p0;
  for (; p + 8 <= p1; p += 8) {
    const __m256i a = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + p)), pa);
    const __m256i b = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + p)), pb);
    const __m256i c = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r2 + p)), pc);
    __m256i* out = reinterpret_cast<__m256i*>(dst + 3 * p);
    _mm256_storeu_si256(out, _mm256_blend_epi32(_mm256_blend_epi32(c, a, 0x49), b, 0x92));      // a0 b0 c0 a1 ..
    _mm256_storeu_si256(out + 1, _mm256_blend_epi32(_mm256_blend_epi32(b, c, 0x49), a, 0x92));  // c2 a3 b3 c3 ..
    _mm256_storeu_si256(out + 2, _mm256_blend_epi32(_mm256_blend_epi32(a, b, 0x49), c, 0x92));  // b5 c5 a6 b6 ..
  }
  for (; p < p1; ++p) {
    dst[3 * p] = r0[p];
    dst[3 * p + 1] = r1[p];
    dst[3 * p + 2] = r2[p];
  }
}

// ---- transpose8: the 8 rows' pairs of columns interleaved, then their quads, then halves.
POCKET_TARGET void transpose8_avx2(const uint32_t* s, int64_t s_stride, uint32_t* d, int64_t d_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(s + i * s_stride));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // rows i, i+1: columns 0 0 1 1 | 4 4 5 5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  //                      2 2 3 3 | 6 6 7 7
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);      // rows i..i+3: column 0 | 4
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);  // column 1 | 5
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(reinterpret_cast<float*>(d + c * d_stride), _mm256_permute2f128_ps(r[c], r[c + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(d + (c + 4) * d_stride), _mm256_permute2f128_ps(r[c], r[c + 4], 0x31));
  }
}

}  // namespace

// 32 lookups at a time: the table's 16 rows of 16 bytes each look up the low nibbles of the
// indices (VPSHUFB), and a byte keeps the one from the row its high nibble names.
POCKET_TARGET void lookup8_avx2(const int8_t* x, int8_t* y, const int8_t* t, int64_t i0, int64_t i1) {
  __m256i rows[16];
  for (int k = 0; k < 16; ++k)
    rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + 16 * k)));
  const __m256i nibble = _mm256_set1_epi8(0x0F), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  int64_t i = i0;
  for (; i + 32 <= i1; i += 32) {
    const __m256i u = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), flip);
    const __m256i lo = _mm256_and_si256(u, nibble);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), nibble), r = _mm256_shuffle_epi8(rows[0], lo);
    for (int k = 1; k < 16; ++k) {
      hi = _mm256_sub_epi8(hi, _mm256_set1_epi8(1));  // 0 where the high nibble is k
      r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(rows[k], lo), _mm256_cmpeq_epi8(hi, _mm256_setzero_si256()));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  lookup8_portable(x, y, t, i, i1);  // the tail
}

extern const NnKernels kNnF32Avx2 = {layer_norm_rows_avx2, softmax_rows_avx2, gelu_range_avx2, interleave3_avx2,
                                     transpose8_avx2, hard_range_avx2, logistic_range_avx2, activate_rows_avx2,
                                     lookup8_avx2};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
