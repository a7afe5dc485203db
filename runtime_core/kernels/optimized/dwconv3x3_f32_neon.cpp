// Depthwise 3x3 convolution of one channel, float32, NEON (arm64): 4 output columns per
// vector where all three taps of a row lie inside the input; stride 2 uses the
// de-interleaving load (LD2). Borders (padding) one column at a time with bounds checks.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

void dwconv3x3(const float* x, int64_t ih, int64_t iw, const float* w, float bias, int64_t stride, int64_t pad_h,
               int64_t pad_w, float* y, int64_t oh, int64_t ow) {
  // Vector columns [lo, hi): every float the loads touch lies inside the row (LD2 reads 8
  // floats: one past the last tap at stride 2).
  const int64_t lo = (pad_w + stride - 1) / stride;
  const int64_t last = iw - (stride == 1 ? 3 : 4) + pad_w;  // ox * stride <= last
  int64_t hi = last < 0 ? 0 : last / stride + 1;
  hi = hi > ow ? ow : hi;
  for (int64_t oy = 0; oy < oh; ++oy) {
    const float* rows[3];
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t iy = oy * stride - pad_h + kh;
      rows[kh] = iy >= 0 && iy < ih ? x + iy * iw : nullptr;
    }
    float* yr = y + oy * ow;
    int64_t ox = 0;
    for (; ox < lo && ox < ow; ++ox) yr[ox] = dwconv3x3_column(rows, w, bias, ox * stride - pad_w, iw);
    for (; ox + 4 <= hi; ox += 4) {
      float32x4_t acc = vdupq_n_f32(bias);
      const int64_t ix = ox * stride - pad_w;
      for (int kh = 0; kh < 3; ++kh) {
        if (rows[kh] == nullptr) continue;
        const float* r = rows[kh] + ix;
        const float* wk = w + kh * 3;
        if (stride == 1) {
          acc = vfmaq_n_f32(acc, vld1q_f32(r), wk[0]);
          acc = vfmaq_n_f32(acc, vld1q_f32(r + 1), wk[1]);
          acc = vfmaq_n_f32(acc, vld1q_f32(r + 2), wk[2]);
        } else {
          const float32x4x2_t eo = vld2q_f32(r);
          acc = vfmaq_n_f32(acc, eo.val[0], wk[0]);
          acc = vfmaq_n_f32(acc, eo.val[1], wk[1]);
          acc = vfmaq_n_f32(acc, vld2q_f32(r + 2).val[0], wk[2]);
        }
      }
      vst1q_f32(yr + ox, acc);
    }
    for (; ox < ow; ++ox) yr[ox] = dwconv3x3_column(rows, w, bias, ox * stride - pad_w, iw);
  }
}

}  // namespace

extern const DwConv3x3Fn kDwConv3x3Neon = dwconv3x3;

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
