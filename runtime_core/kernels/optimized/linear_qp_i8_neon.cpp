// pocket::linear_q_packed microkernels, NEON (arm64, no dot product): a block of 16 channels
// is four vectors. Per vector (4 channels x 4 columns), SMULL/SMLAL multiply the nibbles by
// the broadcast activation bytes into int16 (low and high nibble halves added: at most
// 2·15·128), ADDP adds neighbours and SADALP adds the pairs into each channel's int32 lane.
// Tile and block loop: linear_qp_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

struct Neon {
  using Acc = int32x4_t;
  using W = int8x16_t;
  using B = int8x16_t;
  using F = float32x4_t;
  static constexpr int kLanes = 4, kMr = 2;
  static Acc zero() { return vdupq_n_s32(0); }
  static F fzero() { return vdupq_n_f32(0); }
  static void nibbles(const uint8_t* p, W* lo, W* hi) {
    const uint8x16_t b = vld1q_u8(p);
    *lo = vreinterpretq_s8_u8(vandq_u8(b, vdupq_n_u8(0x0F)));
    *hi = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
  }
  static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(q));
  }
  static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) {
    // channels 0, 1 (low 8 bytes) and 2, 3 (high 8 bytes): 4 products each
    const int16x8_t p01 = vmlal_s8(vmull_s8(vget_low_s8(lo), vget_low_s8(xa)), vget_low_s8(hi), vget_low_s8(xb));
    const int16x8_t p23 = vmlal_high_s8(vmull_high_s8(lo, xa), hi, xb);
    return vpadalq_s16(acc, vpaddq_s16(p01, p23));
  }
  static F fload(const float* p) { return vld1q_f32(p); }
  static F fset(float v) { return vdupq_n_f32(v); }
  static F fmadd(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static F fmul(F a, F b) { return vmulq_f32(a, b); }
  static void fstore(float* p, F v) { vst1q_f32(p, v); }
  static F cvt(Acc acc, int32_t sub) { return vcvtq_f32_s32(vsubq_s32(acc, vdupq_n_s32(sub))); }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8Neon = {linear_qp_run<Neon>};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
