// pocket::rms_norm, rope and swiglu, NEON (arm64), 4 floats at a time with scalar tails.
// Same arithmetic as llm_f32_avx2.cpp: squares summed in double (2 lanes), sigmoid from
// e = exp(-|g|) so no exponential overflows.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

void rms_norm_rows_neon(const RmsNormArgs& a, int64_t r0, int64_t r1) {
  const int64_t d = a.d;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = a.x + r * d;
    float* y = a.y + r * d;
    float64x2_t acc0 = vdupq_n_f64(0.0), acc1 = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 4 <= d; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      const float64x2_t lo = vcvt_f64_f32(vget_low_f32(v)), hi = vcvt_high_f64_f32(v);
      acc0 = vfmaq_f64(acc0, lo, lo);
      acc1 = vfmaq_f64(acc1, hi, hi);
    }
    double ss = vaddvq_f64(vaddq_f64(acc0, acc1));
    for (; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + a.eps);
    for (i = 0; i + 4 <= d; i += 4)
      vst1q_f32(y + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), scale), vld1q_f32(a.w + i)));
    for (; i < d; ++i) y[i] = (x[i] * scale) * a.w[i];
  }
}

void rope_rows_neon(const RopeArgs& a, int64_t r0, int64_t r1) {
  const int64_t D = a.D, h = D / 2;
  for (int64_t r = r0; r < r1; ++r) {  // r = (b * T + t) * H + head
    const float* x = a.x + r * D;
    const float* c = a.cos + (r / a.H % a.T) * D;
    const float* s = a.sin + (r / a.H % a.T) * D;
    float* y = a.y + r * D;
    int64_t i = 0;
    for (; i + 4 <= h; i += 4) {
      const float32x4_t lo = vld1q_f32(x + i), hi = vld1q_f32(x + i + h);
      vst1q_f32(y + i, vsubq_f32(vmulq_f32(lo, vld1q_f32(c + i)), vmulq_f32(hi, vld1q_f32(s + i))));
      vst1q_f32(y + i + h, vaddq_f32(vmulq_f32(hi, vld1q_f32(c + i + h)), vmulq_f32(lo, vld1q_f32(s + i + h))));
    }
    for (; i < h; ++i) {
      const float lo = x[i], hi = x[i + h];
      y[i] = lo * c[i] - hi * s[i];
      y[i + h] = hi * c[i + h] + lo * s[i + h];
    }
  }
}

inline float32x4_t swiglu4(float32x4_t g, float32x4_t up) {
  const float32x4_t e = exp_nonpositive(vnegq_f32(vabsq_f32(g)));
  const float32x4_t one = vdupq_n_f32(1.0f);
  const uint32x4_t negative = vcltq_f32(g, vdupq_n_f32(0.0f));
  const float32x4_t sig = vdivq_f32(vbslq_f32(negative, e, one), vaddq_f32(one, e));
  return vmulq_f32(vmulq_f32(g, sig), up);
}

void swiglu_range_neon(const SwigluArgs& a, int64_t i0, int64_t i1) {
  int64_t i = i0;
  for (; i + 4 <= i1; i += 4) vst1q_f32(a.y + i, swiglu4(vld1q_f32(a.gate + i), vld1q_f32(a.up + i)));
  if (i < i1) {
    float g[4] = {0, 0, 0, 0}, u[4] = {0, 0, 0, 0}, y[4];
    for (int64_t j = i; j < i1; ++j) g[j - i] = a.gate[j], u[j - i] = a.up[j];
    vst1q_f32(y, swiglu4(vld1q_f32(g), vld1q_f32(u)));
    for (int64_t j = i; j < i1; ++j) a.y[j] = y[j - i];
  }
}

}  // namespace

extern const LlmKernels kLlmF32Neon = {rms_norm_rows_neon, rope_rows_neon, swiglu_range_neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
