// pocket::linear_q_packed microkernels, NEON (arm64, no dot product): a block of 16 channels
// is four vectors. Per vector (4 channels x 4 columns), SMULL/SMLAL multiply the weights
// (nibbles; signed bytes, asymmetric ones shifted by -128) by the broadcast activation bytes
// into int16, then pairwise adds reach each channel's int32 lane.
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
  template <int Fmt>
  static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
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
  static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(q));
  }
  template <int Fmt>
  static Acc dot2(Acc acc, W wa, B xa, W wb, B xb) {
    // channels 0, 1 (low 8 bytes) and 2, 3 (high 8 bytes): int16 sums of the two halves'
    // products (at most 2·128·127), then 4-bit: pairs added in int16 (at most 4·15·127);
    // 8-bit: widened pairs
    const int16x8_t p01 = vmlal_s8(vmull_s8(vget_low_s8(wa), vget_low_s8(xa)), vget_low_s8(wb), vget_low_s8(xb));
    const int16x8_t p23 = vmlal_high_s8(vmull_high_s8(wa, xa), wb, xb);
    if constexpr (qp_bits(Fmt) == 4) return vpadalq_s16(acc, vpaddq_s16(p01, p23));
    return vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(p01), vpaddlq_s16(p23)));
  }
  static F fload(const float* p) { return vld1q_f32(p); }
  static F hload(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static F fset(float v) { return vdupq_n_f32(v); }
  static F fmadd(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static F fmul(F a, F b) { return vmulq_f32(a, b); }
  static void fstore(float* p, F v) { vst1q_f32(p, v); }
  static F cvt(Acc acc, int32_t sub) { return vcvtq_f32_s32(vsubq_s32(acc, vdupq_n_s32(sub))); }
};

}  // namespace

#include "linear_qp_tile.inc"

namespace {

// quantize_row's operations (qp_quantize_row in linear_qp_tile.inc), 8 values at a time
// (scale_cols and span are multiples of 8): as the x86 ones, with FMAXNM / FMINNM (a NaN loses
// to the number: amax skips it, the clamp gives -127), FCVTNS (nearest, ties to even) and
// saturating narrows.
struct NeonRow {
  using M = float32x4_t;
  using S = int32_t;
  static constexpr int64_t kQ = 8;
  static M mzero() { return vdupq_n_f32(0.0f); }
  static M amax(M m, const float* x, int64_t) {
    return vmaxnmq_f32(vmaxnmq_f32(vabsq_f32(vld1q_f32(x)), m), vabsq_f32(vld1q_f32(x + 4)));
  }
  static float max_of(M m) { return vmaxnmvq_f32(m); }
  static void quantize(const float* x, int64_t, float inv, int8_t* out) {
    const auto q = [&](const float* p) {
      const float32x4_t v = vmulq_f32(vld1q_f32(p), vdupq_n_f32(inv));
      return vcvtnq_s32_f32(vminnmq_f32(vmaxnmq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f)));
    };
    vst1_s8(out, vqmovn_s16(vcombine_s16(vqmovn_s32(q(x)), vqmovn_s32(q(x + 4)))));
  }
  static S szero() { return 0; }
  static S sum(S t, const int8_t* q, int64_t) { return t + vaddlv_s8(vld1_s8(q)); }
  static int32_t sum_of(S t) { return t; }
};

}  // namespace

void linear_qp_quantize_row_neon(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                 int32_t* xs) {
  qp_quantize_row<NeonRow>(x, k, scale_cols, span, xq, sx, xs);
}

extern const LinearQPKernels kLinearQPI8Neon = {linear_qp_run<Neon>, linear_qp_quantize_row_neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
