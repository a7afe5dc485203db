// pocket::conv2d_q8 microkernels, NEON (arm64): int16 x - zp times the file's int8 weights,
// de-interleaved by input channel and widened as they are loaded (LD4, SXTL: once per step
// for all mr positions), then one SMLAL by element per input channel and 4 output channels;
// 8 output channels per step. Tile: conv_q8_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

struct Neon {
  using E = int16_t;
  struct Acc {
    int32x4_t lo, hi;  // channels 0-3, 4-7
  };
  struct W {
    int16x8_t c[4];  // input channel j of the quad: its weights of the 8 channels
  };
  using B = int16x4_t;  // a pixel's quad of inputs
  static constexpr int kLanes = 8, kKc = 4;
  static constexpr bool kStore8x8 = false;
  static constexpr bool kRequantize4 = false;
  static constexpr bool kExpandSlide = false;
  static constexpr bool kStoreRes = false;
  static Acc zero() { return {vdupq_n_s32(0), vdupq_n_s32(0)}; }
  static W load_w(const int8_t* w) {
    const int8x8x4_t q = vld4_s8(w);
    return {{vmovl_s8(q.val[0]), vmovl_s8(q.val[1]), vmovl_s8(q.val[2]), vmovl_s8(q.val[3])}};
  }
  static B bcast(const E* x) { return vld1_s16(x); }
  static Acc dot(Acc acc, W w, B x) {
    acc.lo = vmlal_lane_s16(acc.lo, vget_low_s16(w.c[0]), x, 0);
    acc.hi = vmlal_high_lane_s16(acc.hi, w.c[0], x, 0);
    acc.lo = vmlal_lane_s16(acc.lo, vget_low_s16(w.c[1]), x, 1);
    acc.hi = vmlal_high_lane_s16(acc.hi, w.c[1], x, 1);
    acc.lo = vmlal_lane_s16(acc.lo, vget_low_s16(w.c[2]), x, 2);
    acc.hi = vmlal_high_lane_s16(acc.hi, w.c[2], x, 2);
    acc.lo = vmlal_lane_s16(acc.lo, vget_low_s16(w.c[3]), x, 3);
    acc.hi = vmlal_high_lane_s16(acc.hi, w.c[3], x, 3);
    return acc;
  }
  static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo, float hi,
                         int32_t zp, int8_t* out) {
    const int32x4_t a = requantize_conv_q8(acc.lo, corr, mult, bias, lo, hi, zp);
    const int32x4_t b = requantize_conv_q8(acc.hi, corr + 4, mult + 4, bias + 4, lo, hi, zp);
    vst1_s8(out, vmovn_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b))));
  }
  static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo, float hi,
                    float* out) {
    store_conv_q8(acc.lo, corr, mult, bias, lo, hi, out);
    store_conv_q8(acc.hi, corr + 4, mult + 4, bias + 4, lo, hi, out + 4);
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I16Neon = {2, 0, conv_q8_quantize_row<Neon>, conv_q8_quantize_floats,
    conv_q8_quantize_pixels<Neon>, nullptr, conv_q8_rescale, conv_q8_requantize_values,
    conv_q8_int8_floats,
    {conv_q8_tile_fn<Neon, 6, 1>(), conv_q8_tile_fn<Neon, 6, 1>(), conv_q8_tile_fn<Neon, 6, 1>()},
    nullptr, nullptr, 0, {}, conv_q8_out_params, nullptr};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
