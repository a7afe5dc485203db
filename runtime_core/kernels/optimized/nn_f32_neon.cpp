// aten::native_layer_norm, _softmax and gelu rows, hardswish, hardsigmoid, sigmoid and silu,
// NEON (arm64), 4 floats at a time with scalar tails, and aten::permute's 3-channel interleave.
// Same arithmetic as nn_f32_avx2.cpp: layer_norm statistics in double, softmax from
// exp_nonpositive with the portable arithmetic for rows holding a NaN or an infinity, gelu's
// Phi from the erfc fit (relative error < 1.2e-7), sigmoid from exp(-|x|).
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

// ---- layer_norm

void layer_norm_rows_neon(const LayerNormRows& a, int64_t r0, int64_t r1) {
  const int64_t n = a.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = a.x + r * n;
    float* y = a.y + r * n;
    float64x2_t s0 = vdupq_n_f64(0.0), s1 = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(v)));
      s1 = vaddq_f64(s1, vcvt_high_f64_f32(v));
    }
    double sum = vaddvq_f64(vaddq_f64(s0, s1));
    for (; i < n; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(n);
    const float64x2_t mv = vdupq_n_f64(mean);
    float64x2_t q0 = vdupq_n_f64(0.0), q1 = vdupq_n_f64(0.0);
    for (i = 0; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      const float64x2_t d0 = vsubq_f64(vcvt_f64_f32(vget_low_f32(v)), mv), d1 = vsubq_f64(vcvt_high_f64_f32(v), mv);
      q0 = vfmaq_f64(q0, d0, d0);
      q1 = vfmaq_f64(q1, d1, d1);
    }
    double sq = vaddvq_f64(vaddq_f64(q0, q1));
    for (; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + a.eps);
    const float64x2_t rv = vdupq_n_f64(rstd);
    for (i = 0; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      const float64x2_t d0 = vmulq_f64(vsubq_f64(vcvt_f64_f32(vget_low_f32(v)), mv), rv);
      const float64x2_t d1 = vmulq_f64(vsubq_f64(vcvt_high_f64_f32(v), mv), rv);
      float32x4_t t = vcvt_high_f32_f64(vcvt_f32_f64(d0), d1);
      if (a.w != nullptr) t = vmulq_f32(t, vld1q_f32(a.w + i));
      if (a.b != nullptr) t = vaddq_f32(t, vld1q_f32(a.b + i));
      vst1q_f32(y + i, t);
    }
    for (; i < n; ++i) {
      float t = static_cast<float>((x[i] - mean) * rstd);
      if (a.w != nullptr) t *= a.w[i];
      if (a.b != nullptr) t += a.b[i];
      y[i] = t;
    }
    a.mean[r] = static_cast<float>(mean);
    a.rstd[r] = static_cast<float>(rstd);
  }
}

// ---- softmax

void softmax_rows_neon(const float* xs, float* ys, int64_t n, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = xs + r * n;
    float* y = ys + r * n;
    float32x4_t mx = vdupq_n_f32(-INFINITY);
    uint32x4_t ok = vdupq_n_u32(~0u);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      mx = vmaxq_f32(mx, v);
      ok = vandq_u32(ok, vceqq_f32(v, v));  // false for NaN
    }
    float m = vmaxvq_f32(mx);
    bool nan = vminvq_u32(ok) == 0;
    for (; i < n; ++i) {
      nan = nan || std::isnan(x[i]);
      m = x[i] > m ? x[i] : m;
    }
    if (nan || std::isinf(m)) {
      softmax_row_exact(x, y, n);
      continue;
    }
    const float32x4_t mv = vdupq_n_f32(m);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (i = 0; i + 4 <= n; i += 4) {
      const float32x4_t e = exp_nonpositive(vsubq_f32(vld1q_f32(x + i), mv));
      acc = vaddq_f32(acc, e);
      vst1q_f32(y + i, e);
    }
    float sum = vaddvq_f32(acc);
    for (; i < n; ++i) {
      const float e = vgetq_lane_f32(exp_nonpositive(vdupq_n_f32(x[i] - m)), 0);
      y[i] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / static_cast<double>(sum));
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), inv));
    for (; i < n; ++i) y[i] *= inv;
  }
}

// ---- gelu

// e^x for x <= 0, and 0 below -87 (see nn_f32_avx2.cpp).
inline float32x4_t exp_or_zero(float32x4_t x) {
  const uint32x4_t keep = vcgeq_f32(x, vdupq_n_f32(-87.0f));
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(exp_nonpositive(x)), keep));
}

// Phi(x) from erfc of |x|/√2 (see nn_f32_avx2.cpp).
inline float32x4_t normal_cdf(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f), half = vdupq_n_f32(0.5f);
  const float32x4_t z = vmulq_n_f32(vabsq_f32(x), 0.70710678118654752f);
  const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, z, half));
  float32x4_t p = vdupq_n_f32(0.17087277f);
  p = vfmaq_f32(vdupq_n_f32(-0.82215223f), p, t);
  p = vfmaq_f32(vdupq_n_f32(1.48851587f), p, t);
  p = vfmaq_f32(vdupq_n_f32(-1.13520398f), p, t);
  p = vfmaq_f32(vdupq_n_f32(0.27886807f), p, t);
  p = vfmaq_f32(vdupq_n_f32(-0.18628806f), p, t);
  p = vfmaq_f32(vdupq_n_f32(0.09678418f), p, t);
  p = vfmaq_f32(vdupq_n_f32(0.37409196f), p, t);
  p = vfmaq_f32(vdupq_n_f32(1.00002368f), p, t);
  p = vfmaq_f32(vdupq_n_f32(-1.26551223f), p, t);
  const float32x4_t arg = vfmsq_f32(p, z, z);
  // FMIN keeps a NaN (the x86 MINPS does not, but there t carries the NaN too)
  const float32x4_t half_erfc = vmulq_f32(vmulq_f32(t, half), exp_or_zero(vminq_f32(arg, vdupq_n_f32(0.0f))));
  const uint32x4_t negative = vcltq_f32(x, vdupq_n_f32(0.0f));
  return vbslq_f32(negative, half_erfc, vsubq_f32(one, half_erfc));
}

inline float32x4_t sigmoid(float32x4_t u) {
  const float32x4_t e = exp_or_zero(vnegq_f32(vabsq_f32(u)));
  const float32x4_t one = vdupq_n_f32(1.0f);
  const uint32x4_t negative = vcltq_f32(u, vdupq_n_f32(0.0f));
  return vdivq_f32(vbslq_f32(negative, e, one), vaddq_f32(one, e));
}

inline float32x4_t gelu4(float32x4_t x, bool tanh) {
  if (!tanh) return vmulq_f32(x, normal_cdf(x));
  const float32x4_t x3 = vmulq_f32(vmulq_f32(x, x), x);
  const float32x4_t v = vmulq_n_f32(vfmaq_n_f32(x, x3, 0.044715f), 2 * 0.79788456080286535588f);
  return vmulq_f32(x, sigmoid(v));
}

// y[i] = f(x[i]) for i in [i0, i1), 4 floats at a time, the tail through a zero-padded vector.
template <class F>
inline void map4(const float* x, float* y, int64_t i0, int64_t i1, F f) {
  int64_t i = i0;
  for (; i + 4 <= i1; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
  if (i < i1) {
    float in[4] = {0, 0, 0, 0}, out[4];
    for (int64_t j = i; j < i1; ++j) in[j - i] = x[j];
    vst1q_f32(out, f(vld1q_f32(in)));
    for (int64_t j = i; j < i1; ++j) y[j] = out[j - i];
  }
}

void gelu_range_neon(const float* x, float* y, int64_t i0, int64_t i1, bool tanh) {
  map4(x, y, i0, i1, [tanh](float32x4_t v) { return gelu4(v, tanh); });
}

// ---- hardswish, hardsigmoid: relu6(x + 3) as max(0, r) then min(6, .) (a NaN stays a NaN),
// then the portable kernel's multiply and divide.
inline float32x4_t hard4(float32x4_t x, bool swish) {
  const float32x4_t six = vdupq_n_f32(6.0f);
  const float32x4_t r = vminq_f32(six, vmaxq_f32(vdupq_n_f32(0.0f), vaddq_f32(x, vdupq_n_f32(3.0f))));
  return vdivq_f32(swish ? vmulq_f32(x, r) : r, six);
}

void hard_range_neon(const float* x, float* y, int64_t i0, int64_t i1, bool swish) {
  map4(x, y, i0, i1, [swish](float32x4_t v) { return hard4(v, swish); });
}

// ---- sigmoid, silu: sigmoid() above, and x · sigmoid(x). sigmoid() alone would make a NaN 1;
// the product keeps it.
inline float32x4_t logistic4(float32x4_t v, bool silu) {
  const float32x4_t s = sigmoid(v);
  return silu ? vmulq_f32(v, s) : vbslq_f32(vceqq_f32(v, v), s, v);
}

void logistic_range_neon(const float* x, float* y, int64_t i0, int64_t i1, bool silu) {
  map4(x, y, i0, i1, [silu](float32x4_t v) { return logistic4(v, silu); });
}

// ---- the activation of a convolution's tile, in place.
void activate_rows_neon(ConvActivation act, float* y, int64_t ldy, int64_t rows, int64_t cols) {
  const bool logistic = conv_activation_logistic(act), flag = conv_activation_times_x(act);
  for (int64_t r = 0; r < rows; ++r, y += ldy)
    map4(y, y, 0, cols, [=](float32x4_t v) { return logistic ? logistic4(v, flag) : hard4(v, flag); });
}

// interleave3: 4 pixels at a time through ST3, the rest one by one.
void interleave3_neon(const uint32_t* src, uint32_t* dst, int64_t plane, int64_t p0, int64_t p1) {
  const uint32_t* r0 = src;
  const uint32_t* r1 = src + plane;
  const uint32_t* r2 = src + 2 * plane;
  int64_t p = p0;
  for (; p + 4 <= p1; p += 4) {
    const uint32x4x3_t v = {{vld1q_u32(r0 + p), vld1q_u32(r1 + p), vld1q_u32(r2 + p)}};
    vst3q_u32(dst + 3 * p, v);
  }
  for (; p < p1; ++p) {
    dst[3 * p] = r0[p];
    dst[3 * p + 1] = r1[p];
    dst[3 * p + 2] = r2[p];
  }
}

// transpose8: four 4x4 blocks, each through pairs of lanes, then of halves (TRN1/TRN2).
void transpose8_neon(const uint32_t* s, int64_t s_stride, uint32_t* d, int64_t d_stride) {
  for (int r0 = 0; r0 < 8; r0 += 4)
    for (int c0 = 0; c0 < 8; c0 += 4) {
      uint32x4_t a[4];
      for (int i = 0; i < 4; ++i) a[i] = vld1q_u32(s + (r0 + i) * s_stride + c0);
      const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(a[0], a[1])),
                       t1 = vreinterpretq_u64_u32(vtrn2q_u32(a[0], a[1])),
                       t2 = vreinterpretq_u64_u32(vtrn1q_u32(a[2], a[3])),
                       t3 = vreinterpretq_u64_u32(vtrn2q_u32(a[2], a[3]));
      uint32_t* o = d + c0 * d_stride + r0;
      vst1q_u32(o, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
      vst1q_u32(o + d_stride, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
      vst1q_u32(o + 2 * d_stride, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
      vst1q_u32(o + 3 * d_stride, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
    }
}

}  // namespace

// 16 lookups at a time: TBL on the table's first 64 bytes, then TBX (which keeps the lanes
// whose index is out of its 64) on the next three 64 with the index less 64, 128, 192.
void lookup8_neon(const int8_t* x, int8_t* y, const int8_t* t, int64_t i0, int64_t i1) {
  const uint8_t* tu = reinterpret_cast<const uint8_t*>(t);
  const uint8x16x4_t q0 = vld1q_u8_x4(tu), q1 = vld1q_u8_x4(tu + 64), q2 = vld1q_u8_x4(tu + 128),
                     q3 = vld1q_u8_x4(tu + 192);
  const uint8x16_t flip = vdupq_n_u8(0x80), step = vdupq_n_u8(64);
  int64_t i = i0;
  for (; i + 16 <= i1; i += 16) {
    uint8x16_t u = veorq_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(x + i)), flip);
    uint8x16_t r = vqtbl4q_u8(q0, u);
    u = vsubq_u8(u, step);
    r = vqtbx4q_u8(r, q1, u);
    u = vsubq_u8(u, step);
    r = vqtbx4q_u8(r, q2, u);
    u = vsubq_u8(u, step);
    r = vqtbx4q_u8(r, q3, u);
    vst1q_u8(reinterpret_cast<uint8_t*>(y + i), r);
  }
  lookup8_portable(x, y, t, i, i1);  // the tail
}

extern const NnKernels kNnF32Neon = {layer_norm_rows_neon, softmax_rows_neon, gelu_range_neon, interleave3_neon,
                                     transpose8_neon, hard_range_neon, logistic_range_neon, activate_rows_neon,
                                     lookup8_neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
