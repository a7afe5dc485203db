// pocket::linear_q with float32 activations (act_mode 0), NEON (arm64).
//   gemv: up to 4 rows of x against 4 (one row of x) or 2 weight rows at a time; 16
//         columns of a weight row (8 bytes 4-bit: low nibbles then high nibbles, matching
//         the permuted x; 16 bytes 8-bit) are dequantized into 4 vectors (q * scale, + min:
//         exactly the reference's float32 weights) and FMA'd with x.
//   dequantize: whole weight rows to floats, for the GEMM path of longer x.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

namespace pocket {
namespace detail {

#define POCKET_TARGET
#include "quant_scales.inc"

namespace {

enum Format { kQ4Sym, kQ4Asym, kQ8Sym, kQ8Asym };

Format format_of(const QuantWeight& w) {
  if (w.bits == 4) return w.symmetric() ? kQ4Sym : kQ4Asym;
  return w.symmetric() ? kQ8Sym : kQ8Asym;
}

// The 16 quantized values of columns [col, col + 16) of `row` as int16: 4-bit in natural
// column order when `kInterleaved`, else the even columns then the odd ones.
template <int F, bool kInterleaved>
inline void load_q(const uint8_t* row, int64_t col, int16x8_t* lo, int16x8_t* hi) {
  if constexpr (F == kQ4Sym || F == kQ4Asym) {
    const uint8x8_t b = vld1_u8(row + col / 2);
    uint8x8_t l = vand_u8(b, vdup_n_u8(0x0F)), h = vshr_n_u8(b, 4);
    if constexpr (kInterleaved) {
      const uint8x8x2_t z = vzip_u8(l, h);
      l = z.val[0];
      h = z.val[1];
    }
    *lo = vreinterpretq_s16_u16(vmovl_u8(l));
    *hi = vreinterpretq_s16_u16(vmovl_u8(h));
    if constexpr (F == kQ4Sym) {
      *lo = vsubq_s16(*lo, vdupq_n_s16(8));
      *hi = vsubq_s16(*hi, vdupq_n_s16(8));
    }
  } else if constexpr (F == kQ8Sym) {
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
  if constexpr (F == kQ4Asym || F == kQ8Asym) {
    *a = vaddq_f32(*a, mn);
    *b = vaddq_f32(*b, mn);
  }
}

template <int MR, int NR, int F, bool H>
void gemv_tile(const float* x, int64_t k, const QuantWeight& w, int64_t c, const float* bias, float* y, int64_t ldy) {
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  float32x4_t acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r) acc[i][r] = vdupq_n_f32(0.0f);
  const int64_t g = w.group_size;
  TileScales<NR, H, kAsym> ts;
  for (int64_t j0 = 0; j0 < w.groups; j0 += kWiden) {
    const int64_t jn = w.groups - j0 < kWiden ? w.groups - j0 : kWiden;
    ts.load(w, c, j0, jn);
    for (int64_t jj = 0; jj < jn; ++jj) {
      const int64_t j = j0 + jj;
      float32x4_t s[NR], mn[NR];
      POCKET_UNROLL for (int r = 0; r < NR; ++r) {
        s[r] = vdupq_n_f32(ts.scale(r, jj));
        mn[r] = vdupq_n_f32(kAsym ? ts.min(r, jj) : 0.0f);
      }
      for (int64_t col = j * g; col < (j + 1) * g; col += 16) {
        float32x4_t wv[NR][4];
        POCKET_UNROLL for (int r = 0; r < NR; ++r) {
          int16x8_t ql, qh;
          load_q<F, false>(w.row(c + r), col, &ql, &qh);
          dequant<F>(ql, s[r], mn[r], &wv[r][0], &wv[r][1]);
          dequant<F>(qh, s[r], mn[r], &wv[r][2], &wv[r][3]);
        }
        POCKET_UNROLL for (int i = 0; i < MR; ++i) {
          const float* xr = x + i * k + col;
          const float32x4_t x0 = vld1q_f32(xr), x1 = vld1q_f32(xr + 4), x2 = vld1q_f32(xr + 8), x3 = vld1q_f32(xr + 12);
          POCKET_UNROLL for (int r = 0; r < NR; ++r) {
            acc[i][r] = vfmaq_f32(acc[i][r], wv[r][0], x0);
            acc[i][r] = vfmaq_f32(acc[i][r], wv[r][1], x1);
            acc[i][r] = vfmaq_f32(acc[i][r], wv[r][2], x2);
            acc[i][r] = vfmaq_f32(acc[i][r], wv[r][3], x3);
          }
        }
      }
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r)
      y[i * ldy + c + r] = vaddvq_f32(acc[i][r]) + (bias != nullptr ? bias[c + r] : 0.0f);
}

using GemvTile = void (*)(const float*, int64_t, const QuantWeight&, int64_t, const float*, float*, int64_t);

template <int F, bool H>
struct GemvTiles {
  static constexpr GemvTile tiles[4][2] = {
      {gemv_tile<1, 4, F, H>, gemv_tile<1, 1, F, H>},
      {gemv_tile<2, 2, F, H>, gemv_tile<2, 1, F, H>},
      {gemv_tile<3, 2, F, H>, gemv_tile<3, 1, F, H>},
      {gemv_tile<4, 2, F, H>, gemv_tile<4, 1, F, H>},
  };
};

using GemvTileRow = GemvTile[2];

template <bool H>
const GemvTileRow* gemv_tiles(const QuantWeight& w) {
  switch (format_of(w)) {
    case kQ4Sym: return GemvTiles<kQ4Sym, H>::tiles;
    case kQ4Asym: return GemvTiles<kQ4Asym, H>::tiles;
    case kQ8Sym: return GemvTiles<kQ8Sym, H>::tiles;
    case kQ8Asym: break;
  }
  return GemvTiles<kQ8Asym, H>::tiles;
}

void gemv(const float* x, int64_t m, const QuantWeight& w, int64_t c0, int64_t c1, const float* bias, float* y,
          int64_t ldy) {
  const GemvTileRow* tiles = w.half ? gemv_tiles<true>(w) : gemv_tiles<false>(w);
  const int64_t nr = m == 1 ? 4 : 2;
  int64_t c = c0;
  for (; c + nr <= c1; c += nr) tiles[m - 1][0](x, w.cols, w, c, bias, y, ldy);
  for (; c < c1; ++c) tiles[m - 1][1](x, w.cols, w, c, bias, y, ldy);
}

template <int F, bool H>
void dequantize_rows(const QuantWeight& w, int64_t r0, int64_t r1, float* out) {
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  const int64_t k = w.cols, g = w.group_size;
  for (int64_t r = r0; r < r1; ++r) {
    float* o = out + (r - r0) * k;
    for (int64_t j = 0; j < w.groups; ++j) {
      const float32x4_t s = vdupq_n_f32(scale_of<H>(w.scales, r * w.groups + j));
      const float32x4_t mn = vdupq_n_f32(kAsym ? scale_of<H>(w.mins, r * w.groups + j) : 0.0f);
      for (int64_t col = j * g; col < (j + 1) * g; col += 16) {
        int16x8_t ql, qh;
        load_q<F, true>(w.row(r), col, &ql, &qh);
        float32x4_t v[4];
        dequant<F>(ql, s, mn, &v[0], &v[1]);
        dequant<F>(qh, s, mn, &v[2], &v[3]);
        POCKET_UNROLL for (int u = 0; u < 4; ++u) vst1q_f32(o + col + 4 * u, v[u]);
      }
    }
  }
}

template <bool H>
void dequantize_as(const QuantWeight& w, int64_t r0, int64_t r1, float* out) {
  switch (format_of(w)) {
    case kQ4Sym: dequantize_rows<kQ4Sym, H>(w, r0, r1, out); break;
    case kQ4Asym: dequantize_rows<kQ4Asym, H>(w, r0, r1, out); break;
    case kQ8Sym: dequantize_rows<kQ8Sym, H>(w, r0, r1, out); break;
    case kQ8Asym: dequantize_rows<kQ8Asym, H>(w, r0, r1, out); break;
  }
}

void dequantize(const QuantWeight& w, int64_t r0, int64_t r1, float* out) {
  if (w.half) return dequantize_as<true>(w, r0, r1, out);
  dequantize_as<false>(w, r0, r1, out);
}

}  // namespace

extern const LinearQF32Kernels kLinearQF32Neon = {gemv, dequantize};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
