// pocket::conv2d_q8 microkernels, NEON (arm64): int16 x - zp times int16 weights, one channel
// per step (SMLAL), 4 output channels per vector. Tile: conv_q8_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

struct Neon {
  using E = int16_t;
  using Acc = int32x4_t;
  using W = int16x4_t;
  using B = int16x4_t;
  static constexpr int kLanes = 4, kKc = 1;
  static constexpr bool kStore8x8 = false;
  static Acc zero() { return vdupq_n_s32(0); }
  static W load_w(const E* w) { return vld1_s16(w); }
  static B bcast(const E* x) { return vld1_dup_s16(x); }
  static Acc dot(Acc acc, W w, B x) { return vmlal_s16(acc, w, x); }
  static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo, float hi,
                    float* out) {
    store_conv_q8(acc, corr, mult, bias, lo, hi, out);
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I16Neon = {1, 2, 0, conv_q8_quantize_row<Neon>, conv_q8_quantize_floats,
   conv_q8_tile_fn<Neon, 6, 2>(), conv_q8_tile_fn<Neon, 6, 4>()};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
