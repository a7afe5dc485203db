// One query row of pocket::sdpa, NEON (arm64): q·k dot products 4 floats at a time (two
// accumulators), exponentials 4 at a time (range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial, as sdpa_f32_avx2.cpp), and the weighted sum of V rows in registers, 16 output
// floats per pass.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

float dot(const float* a, const float* b, int64_t d) {
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
    acc1 = vfmaq_f32(acc1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
  }
  for (; i + 4 <= d; i += 4) acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
  float s = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < d; ++i) s += a[i] * b[i];
  return s;
}

void sdpa_row(const float* q, const float* k, const float* v, int64_t len, int64_t d, float scale, float* scores,
              float* o, bool /*fetch_v: not measured on arm64 hardware*/) {
  float max = -INFINITY;
  for (int64_t j = 0; j < len; ++j) {
    scores[j] = dot(q, k + j * d, d) * scale;
    max = scores[j] > max ? scores[j] : max;
  }
  const float32x4_t mv = vdupq_n_f32(max);
  float32x4_t sumv = vdupq_n_f32(0.0f);
  int64_t j = 0;
  for (; j + 4 <= len; j += 4) {
    const float32x4_t e = exp_nonpositive(vsubq_f32(vld1q_f32(scores + j), mv));
    vst1q_f32(scores + j, e);
    sumv = vaddq_f32(sumv, e);
  }
  float sum = vaddvq_f32(sumv);
  for (; j < len; ++j) sum += scores[j] = std::exp(scores[j] - max);
  const float inv = 1.0f / sum;
  for (int64_t c = 0; c < d; c += 16) {
    const int64_t cols = d - c < 16 ? d - c : 16;
    if (cols == 16) {
      float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
      for (int64_t t = 0; t < len; ++t) {
        const float* vr = v + t * d + c;
        POCKET_UNROLL for (int u = 0; u < 4; ++u) acc[u] = vfmaq_n_f32(acc[u], vld1q_f32(vr + 4 * u), scores[t]);
      }
      POCKET_UNROLL for (int u = 0; u < 4; ++u) vst1q_f32(o + c + 4 * u, vmulq_n_f32(acc[u], inv));
    } else {
      for (int64_t i = 0; i < cols; ++i) o[c + i] = 0.0f;
      for (int64_t t = 0; t < len; ++t)
        for (int64_t i = 0; i < cols; ++i) o[c + i] += scores[t] * v[t * d + c + i];
      for (int64_t i = 0; i < cols; ++i) o[c + i] *= inv;
    }
  }
}

// float16 -> float32 (fcvtl, exact, as half_to_float).
void widen_half(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  for (; i < n; ++i) {
    const uint16_t one[4] = {src[i], 0, 0, 0};
    float out[4];
    vst1q_f32(out, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(one))));
    dst[i] = out[0];
  }
}

}  // namespace

extern const SdpaRowFn kSdpaNeon = sdpa_row;
extern const WidenHalfFn kWidenHalfNeon = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
