// pocket::linear_q with float32 activations (act_mode 0), NEON (arm64): 16 columns of a
// weight row (8 bytes 4-bit: low nibbles then high nibbles, matching the permuted x; 16 bytes
// 8-bit) widened to int16, then dequantized into four vectors. Gemv and dequantize loops:
// linear_q_f32_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

namespace pocket {
namespace detail {

#define POCKET_TARGET
#include "quant_scales.inc"

namespace {

#include "neon_helpers.inc"

// The 16 quantized values of columns [col, col + 16) of `row` as int16: 4-bit in natural
// column order when `kInterleaved`, else the even columns then the odd ones.
template <int F, bool kInterleaved>
inline void load_q(const uint8_t* row, int64_t col, int16x8_t* lo, int16x8_t* hi) {
  if constexpr (qp_bits(F) == 4) {
    const uint8x8_t b = vld1_u8(row + col / 2);
    uint8x8_t l = vand_u8(b, vdup_n_u8(0x0F)), h = vshr_n_u8(b, 4);
    if constexpr (kInterleaved) {
      const uint8x8x2_t z = vzip_u8(l, h);
      l = z.val[0];
      h = z.val[1];
    }
    *lo = vreinterpretq_s16_u16(vmovl_u8(l));
    *hi = vreinterpretq_s16_u16(vmovl_u8(h));
    if constexpr (F == kQp4Sym) {
      *lo = vsubq_s16(*lo, vdupq_n_s16(8));
      *hi = vsubq_s16(*hi, vdupq_n_s16(8));
    }
  } else if constexpr (F == kQp8Sym) {
    const int8x16_t b = vld1q_s8(reinterpret_cast<const int8_t*>(row + col));
    *lo = vmovl_s8(vget_low_s8(b));
    *hi = vmovl_s8(vget_high_s8(b));
  } else {
    const uint8x16_t b = vld1q_u8(row + col);
    *lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
    *hi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(b)));
  }
}

// 8 int16 values dequantized into two vectors: q * scale, then + min for asymmetric formats.
template <int F>
inline void dequant(int16x8_t q, float32x4_t s, float32x4_t mn, float32x4_t* a, float32x4_t* b) {
  *a = vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(q))), s);
  *b = vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(q))), s);
  if constexpr (qp_asym(F)) {
    *a = vaddq_f32(*a, mn);
    *b = vaddq_f32(*b, mn);
  }
}

template <int F, bool kInterleaved>
inline void dequant16(const uint8_t* row, int64_t col, float32x4_t s, float32x4_t mn, float32x4_t* out) {
  int16x8_t ql, qh;
  load_q<F, kInterleaved>(row, col, &ql, &qh);
  dequant<F>(ql, s, mn, &out[0], &out[1]);
  dequant<F>(qh, s, mn, &out[2], &out[3]);
}

struct Neon {
  using V = float32x4_t;
  static constexpr int kParts = 4, kCols = 16, kNr2 = 2, kChains1 = 2;
  // Scales factored out for up to 2 rows of x, as on AVX2: per 4 weights a widen and a convert
  // before the FMA, not also a multiply and an add.
  static constexpr bool kFactor = true;
  static constexpr int kFactorRows = 2;
  // The column of x that feeds lane i of 16 unpacked nibbles: the even columns, then the odd.
  static constexpr int x_column(int i) { return i < 8 ? 2 * i : 2 * (i - 8) + 1; }
  struct Deq {
    float32x4_t s, mn;
  };
  static V zero() { return vdupq_n_f32(0.0f); }
  static V set1(float v) { return vdupq_n_f32(v); }
  static V load(const float* p) { return vld1q_f32(p); }
  static V add(V a, V b) { return vaddq_f32(a, b); }
  static V fmadd(V a, V b, V c) { return vfmaq_f32(c, a, b); }
  static float sum(V v) { return vaddvq_f32(v); }
  static void sum4(V a, V b, V c, V d, const float* bias, float* out) { NeonF32::sum4(a, b, c, d, bias, out); }
  template <int F>
  static Deq deq(float s, float mn) {
    return {vdupq_n_f32(s), vdupq_n_f32(mn)};
  }
  template <int F>
  static void weights(const uint8_t* row, int64_t col, const Deq& d, V* out) {
    dequant16<F, false>(row, col, d.s, d.mn, out);
  }
  template <int F>
  static void qweights(const uint8_t* row, int64_t col, V* out) {
    int16x8_t ql, qh;
    load_q<F == kQp4Sym ? kQp4Asym : F, false>(row, col, &ql, &qh);  // 4-bit: the stored nibbles
    out[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(ql)));
    out[1] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(ql)));
    out[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(qh)));
    out[3] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(qh)));
  }
  template <int F>
  static void store_row(const uint8_t* row, int64_t col, const Deq& d, float* o) {
    V v[4];
    dequant16<F, true>(row, col, d.s, d.mn, v);
    POCKET_UNROLL for (int u = 0; u < 4; ++u) vst1q_f32(o + 4 * u, v[u]);
  }
};

}  // namespace

#include "linear_q_f32_tile.inc"

extern const LinearQF32Kernels kLinearQF32Neon = lq_f32_kernels<Neon>();

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
