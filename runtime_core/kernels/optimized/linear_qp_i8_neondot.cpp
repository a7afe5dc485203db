// pocket::linear_q_packed microkernels, NEON with the dot product extension (arm64
// FEAT_DotProd): a block of 16 channels is four vectors; SDOT multiplies signed weight bytes
// (nibbles 0..15; 8-bit values, asymmetric ones shifted by -128) by 4 broadcast activation
// bytes per lane. Tile and block loop:
// linear_qp_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))

namespace pocket {
namespace detail {

namespace {

struct NeonDot {
  using Acc = int32x4_t;
  using W = int8x16_t;
  using B = int8x16_t;
  using F = float32x4_t;
  static constexpr int kLanes = 4, kMr = 2;
  POCKET_TARGET static Acc zero() { return vdupq_n_s32(0); }
  POCKET_TARGET static F fzero() { return vdupq_n_f32(0); }
  template <int Fmt>
  POCKET_TARGET static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
    const uint8x16_t va = vld1q_u8(a);
    if constexpr (qp_bits(Fmt) == 4) {
      *wa = vreinterpretq_s8_u8(vandq_u8(va, vdupq_n_u8(0x0F)));
      *wb = vreinterpretq_s8_u8(vshrq_n_u8(va, 4));
    } else {
      const uint8x16_t flip = vdupq_n_u8(qp_asym(Fmt) ? 0x80 : 0);
      *wa = vreinterpretq_s8_u8(veorq_u8(va, flip));
      *wb = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(b), flip));
    }
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? -128 : 0);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(q));
  }
  template <int Fmt>
  POCKET_TARGET static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) { return vdotq_s32(vdotq_s32(acc, lo, xa), hi, xb); }
  POCKET_TARGET static F fload(const float* p) { return vld1q_f32(p); }
  POCKET_TARGET static F hload(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  POCKET_TARGET static F fset(float v) { return vdupq_n_f32(v); }
  POCKET_TARGET static F fmadd(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  POCKET_TARGET static F fmul(F a, F b) { return vmulq_f32(a, b); }
  POCKET_TARGET static void fstore(float* p, F v) { vst1q_f32(p, v); }
  POCKET_TARGET static F cvt(Acc acc, int32_t sub) { return vcvtq_f32_s32(vsubq_s32(acc, vdupq_n_s32(sub))); }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8NeonDot = {linear_qp_run<NeonDot>};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
