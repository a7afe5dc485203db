// pocket::conv2d_packed microkernels, NEON (arm64): 4 floats per vector; tile 6 positions x
// 16 channels (one block; the wide tile is the same). Loops: conv_f32_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

struct Neon {
  using V = float32x4_t;
  static constexpr int kLanes = 4, kDwVecs = 4;
  static V zero() { return vdupq_n_f32(0.0f); }
  static V load(const float* p) { return vld1q_f32(p); }
  static V loadn(const float* p, int n) {
    float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::memcpy(b, p, static_cast<size_t>(n) * sizeof(float));
    return vld1q_f32(b);
  }
  static void store(float* p, V v) { vst1q_f32(p, v); }
  static void storen(float* p, V v, int n) {
    float b[4];
    vst1q_f32(b, v);
    std::memcpy(p, b, static_cast<size_t>(n) * sizeof(float));
  }
  static V bcast(const float* p) { return vld1q_dup_f32(p); }
  static V fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }
  static V add(V a, V b) { return vaddq_f32(a, b); }
  // FMAX/FMIN return NaN when either operand is: a NaN v stays NaN (lo, hi are not NaN).
  static V clamp(V v, float lo, float hi) { return vminq_f32(vmaxq_f32(v, vdupq_n_f32(lo)), vdupq_n_f32(hi)); }
};

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Neon = {conv_f32_tile_fn<Neon, 6, 1>(), conv_f32_tile_fn<Neon, 6, 1>(),
                                            conv_f32_dw_row<Neon>};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
