// pocket::conv2d_q8 microkernels, NEON with the dot product extension (arm64 FEAT_DotProd):
// int8 xq times int8 weights, 4 channels per SDOT lane, 4 output channels per vector.
// Tile: conv_q8_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

struct NeonDot {
  using E = uint8_t;  // the bytes of int8 values
  using Acc = int32x4_t;
  using W = int8x16_t;
  using B = int8x16_t;
  static constexpr int kLanes = 4, kKc = 4;
  static constexpr bool kStore8x8 = false;
  static constexpr bool kRequantize4 = false;
  static constexpr bool kExpandSlide = false;
  static constexpr bool kStoreRes = false;
  POCKET_TARGET static Acc zero() { return vdupq_n_s32(0); }
  POCKET_TARGET static W load_w(const int8_t* w) { return vld1q_s8(w); }
  POCKET_TARGET static B bcast(const E* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(q));
  }
  POCKET_TARGET static B bcast_raw(const E* x) { return bcast(x); }  // byte_offset 0
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) { return vdotq_s32(acc, w, x); }
  // conv_q8_dw_expand's quads: 16 channels at a time, the four taps' bytes zipped into
  // pairs, the pairs into words (a group of 4 channels per vector); the rest one by one.
  POCKET_TARGET static void expand_quads(const int8_t* a, const int8_t* b, const int8_t* c, const int8_t* d,
                                         int64_t n, uint8_t offset, uint32_t* out, int64_t gs) {
    const int8x16_t flip = vdupq_n_s8(static_cast<int8_t>(offset));
    const auto taps = [&](const int8_t* p) POCKET_TARGET { return veorq_s8(vld1q_s8(p), flip); };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const int8x16x2_t ab = vzipq_s8(taps(a + i), taps(b + i)), cd = vzipq_s8(taps(c + i), taps(d + i));
      for (int h = 0; h < 2; ++h) {
        const int16x8x2_t w = vzipq_s16(vreinterpretq_s16_s8(ab.val[h]), vreinterpretq_s16_s8(cd.val[h]));
        vst1q_s16(reinterpret_cast<int16_t*>(out + (i / 4 + 2 * h) * gs), w.val[0]);
        vst1q_s16(reinterpret_cast<int16_t*>(out + (i / 4 + 2 * h + 1) * gs), w.val[1]);
      }
    }
    for (; i < n; ++i) out[i / 4 * gs + i % 4] = dw_quad_word(a[i], b[i], c[i], d[i], offset);
  }
  // conv_q8_requantize_sum per lane: the fp32 traits' (the depthwise store's) on acc - corr.
  POCKET_TARGET static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo,
                                       float hi, int32_t zp, int8_t* out) {
    NeonF32::requantize(vcvtq_f32_s32(vsubq_s32(acc, vld1q_s32(corr))), mult, bias, lo, hi, zp, out);
  }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo, float hi,
                    float* out) {
    store_conv_q8(acc, corr, mult, bias, lo, hi, out);
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I8NeonDot = conv_q8_i8_kernels<NeonDot, 0, 6, 2, 4, 4>();

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
