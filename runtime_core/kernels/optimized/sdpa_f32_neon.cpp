// Query rows of pocket::sdpa, NEON (arm64): q·k dot products 4 floats at a time (two
// accumulators), exponentials 4 at a time (range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial, as sdpa_f32_avx2.cpp), and the weighted sum of V rows in registers, 16 output
// floats per row and pass. Up to kSdpaGroup query heads that share a kv head run together,
// reading K and V once.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

// N query rows (heads that share one kv head: grouped-query attention) against the same K and
// V, each K and V row loaded once for all of them; every row gets exactly a single row's
// operations, in the same order.
template <int N>
void sdpa_rows_n(const float* q, int64_t q_stride, const float* k, const float* v, int64_t len, int64_t d,
                 float scale, float* scores, float* o, int64_t o_stride) {
  float max[N];
  POCKET_UNROLL for (int r = 0; r < N; ++r) max[r] = -INFINITY;
  for (int64_t j = 0; j < len; ++j) {
    const float* kr = k + j * d;
    float32x4_t acc0[N], acc1[N];
    POCKET_UNROLL for (int r = 0; r < N; ++r) acc0[r] = acc1[r] = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= d; i += 8) {
      const float32x4_t k0 = vld1q_f32(kr + i), k1 = vld1q_f32(kr + i + 4);
      POCKET_UNROLL for (int r = 0; r < N; ++r) {
        acc0[r] = vfmaq_f32(acc0[r], vld1q_f32(q + r * q_stride + i), k0);
        acc1[r] = vfmaq_f32(acc1[r], vld1q_f32(q + r * q_stride + i + 4), k1);
      }
    }
    if (i + 4 <= d) {
      const float32x4_t k0 = vld1q_f32(kr + i);
      POCKET_UNROLL for (int r = 0; r < N; ++r) acc0[r] = vfmaq_f32(acc0[r], vld1q_f32(q + r * q_stride + i), k0);
      i += 4;
    }
    POCKET_UNROLL for (int r = 0; r < N; ++r) {
      float sc = vaddvq_f32(vaddq_f32(acc0[r], acc1[r]));
      for (int64_t e = i; e < d; ++e) sc += q[r * q_stride + e] * kr[e];
      sc *= scale;
      scores[r * len + j] = sc;
      max[r] = sc > max[r] ? sc : max[r];
    }
  }
  float inv[N];
  POCKET_UNROLL for (int r = 0; r < N; ++r) {
    float* sr = scores + r * len;
    const float32x4_t mv = vdupq_n_f32(max[r]);
    float32x4_t sumv = vdupq_n_f32(0.0f);
    int64_t j = 0;
    for (; j + 4 <= len; j += 4) {
      const float32x4_t e = exp_nonpositive(vsubq_f32(vld1q_f32(sr + j), mv));
      vst1q_f32(sr + j, e);
      sumv = vaddq_f32(sumv, e);
    }
    float sum = vaddvq_f32(sumv);
    for (; j < len; ++j) sum += sr[j] = std::exp(sr[j] - max[r]);
    inv[r] = 1.0f / sum;
  }
  for (int64_t c = 0; c < d; c += 16) {
    const int64_t cols = d - c < 16 ? d - c : 16;
    if (cols == 16) {
      float32x4_t acc[N][4];
      POCKET_UNROLL for (int r = 0; r < N; ++r) POCKET_UNROLL for (int u = 0; u < 4; ++u) acc[r][u] = vdupq_n_f32(0.0f);
      for (int64_t t = 0; t < len; ++t) {
        const float* vr = v + t * d + c;
        float32x4_t vv[4];
        POCKET_UNROLL for (int u = 0; u < 4; ++u) vv[u] = vld1q_f32(vr + 4 * u);
        POCKET_UNROLL for (int r = 0; r < N; ++r) {
          const float w = scores[r * len + t];
          POCKET_UNROLL for (int u = 0; u < 4; ++u) acc[r][u] = vfmaq_n_f32(acc[r][u], vv[u], w);
        }
      }
      POCKET_UNROLL for (int r = 0; r < N; ++r)
        POCKET_UNROLL for (int u = 0; u < 4; ++u) vst1q_f32(o + r * o_stride + c + 4 * u, vmulq_n_f32(acc[r][u], inv[r]));
    } else {
      for (int r = 0; r < N; ++r) {
        float* orow = o + r * o_stride + c;
        const float* sr = scores + r * len;
        for (int64_t i = 0; i < cols; ++i) orow[i] = 0.0f;
        for (int64_t t = 0; t < len; ++t)
          for (int64_t i = 0; i < cols; ++i) orow[i] += sr[t] * v[t * d + c + i];
        for (int64_t i = 0; i < cols; ++i) orow[i] *= inv[r];
      }
    }
  }
}

void sdpa_rows(const float* q, int64_t q_stride, int n, const float* k, const float* v, int64_t len, int64_t d,
               float scale, float* scores, float* o, int64_t o_stride, bool /*fetch_v: not measured on arm64*/) {
  switch (n) {
    case 1: return sdpa_rows_n<1>(q, q_stride, k, v, len, d, scale, scores, o, o_stride);
    case 2: return sdpa_rows_n<2>(q, q_stride, k, v, len, d, scale, scores, o, o_stride);
    case 3: return sdpa_rows_n<3>(q, q_stride, k, v, len, d, scale, scores, o, o_stride);
    default: return sdpa_rows_n<4>(q, q_stride, k, v, len, d, scale, scores, o, o_stride);
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

extern const SdpaRowsFn kSdpaNeon = sdpa_rows;
extern const WidenHalfFn kWidenHalfNeon = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
