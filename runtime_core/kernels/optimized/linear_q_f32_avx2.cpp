// pocket::linear_q with float32 activations (act_mode 0), AVX2 + FMA (x86-64).
//   gemv: up to 4 rows of x against 4 (one row of x) or 2 weight rows at a time; 16 columns
//         of a weight row (8 bytes 4-bit, 16 bytes 8-bit) are dequantized into two vectors
//         (q * scale, + min: exactly the reference's float32 weights) and FMA'd with x.
//   dequantize: whole weight rows to floats, for the GEMM path of longer x.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c")))

namespace pocket {
namespace detail {

#include "quant_scales.inc"

namespace {

enum Format { kQ4Sym, kQ4Asym, kQ8Sym, kQ8Asym };

Format format_of(const QuantWeight& w) {
  if (w.bits == 4) return w.symmetric() ? kQ4Sym : kQ4Asym;
  return w.symmetric() ? kQ8Sym : kQ8Asym;
}

// The 16 quantized values of columns [col, col + 16) of `row` as int32 in two vectors: for
// 4-bit, the even columns then the odd ones; for 8-bit, in order.
template <int F>
POCKET_TARGET inline void load_q(const uint8_t* row, int64_t col, __m256i* lo, __m256i* hi) {
  if constexpr (F == kQ4Sym || F == kQ4Asym) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + col / 2));
    const __m128i nib = _mm_set1_epi8(0x0F);
    __m128i l = _mm_and_si128(bytes, nib), h = _mm_and_si128(_mm_srli_epi16(bytes, 4), nib);
    if constexpr (F == kQ4Sym) {
      l = _mm_sub_epi8(l, _mm_set1_epi8(8));
      h = _mm_sub_epi8(h, _mm_set1_epi8(8));
    }
    *lo = _mm256_cvtepi8_epi32(l);
    *hi = _mm256_cvtepi8_epi32(h);
  } else {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + col));
    if constexpr (F == kQ8Sym) {
      *lo = _mm256_cvtepi8_epi32(bytes);
      *hi = _mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8));
    } else {
      *lo = _mm256_cvtepu8_epi32(bytes);
      *hi = _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8));
    }
  }
}

// q * scale, then + min for asymmetric formats (two float32 roundings, as the reference).
template <int F>
POCKET_TARGET inline __m256 dequant(__m256i q, __m256 s, __m256 mn) {
  const __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(q), s);
  if constexpr (F == kQ4Asym || F == kQ8Asym) return _mm256_add_ps(w, mn);
  return w;
}

#include "avx2_helpers.inc"

template <int MR, int NR, int F, bool H>
POCKET_TARGET void gemv_tile(const float* x, int64_t k, const QuantWeight& w, int64_t c, const float* bias, float* y,
                             int64_t ldy) {
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  __m256 acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r) acc[i][r] = _mm256_setzero_ps();
  const int64_t g = w.group_size;
  TileScales<NR, H, kAsym> ts;
  for (int64_t j0 = 0; j0 < w.groups; j0 += kWiden) {
    const int64_t jn = w.groups - j0 < kWiden ? w.groups - j0 : kWiden;
    ts.load(w, c, j0, jn);
    for (int64_t jj = 0; jj < jn; ++jj) {
      const int64_t j = j0 + jj;
      __m256 s[NR], mn[NR];
      POCKET_UNROLL for (int r = 0; r < NR; ++r) {
        s[r] = _mm256_set1_ps(ts.scale(r, jj));
        mn[r] = kAsym ? _mm256_set1_ps(ts.min(r, jj)) : _mm256_setzero_ps();
      }
      for (int64_t col = j * g; col < (j + 1) * g; col += 16) {
        __m256 wl[NR], wh[NR];
        POCKET_UNROLL for (int r = 0; r < NR; ++r) {
          __m256i ql, qh;
          load_q<F>(w.row(c + r), col, &ql, &qh);
          wl[r] = dequant<F>(ql, s[r], mn[r]);
          wh[r] = dequant<F>(qh, s[r], mn[r]);
        }
        POCKET_UNROLL for (int i = 0; i < MR; ++i) {
          const __m256 xl = _mm256_loadu_ps(x + i * k + col), xh = _mm256_loadu_ps(x + i * k + col + 8);
          POCKET_UNROLL for (int r = 0; r < NR; ++r) {
            acc[i][r] = _mm256_fmadd_ps(wl[r], xl, acc[i][r]);
            acc[i][r] = _mm256_fmadd_ps(wh[r], xh, acc[i][r]);
          }
        }
      }
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r) y[i * ldy + c + r] = hsum(acc[i][r]) + (bias != nullptr ? bias[c + r] : 0.0f);
}

using GemvTile = void (*)(const float*, int64_t, const QuantWeight&, int64_t, const float*, float*, int64_t);

// [rows of x - 1][0: full tile, 1: one weight row]
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
POCKET_TARGET void dequantize_rows(const QuantWeight& w, int64_t r0, int64_t r1, float* out) {
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  const int64_t k = w.cols, g = w.group_size;
  for (int64_t r = r0; r < r1; ++r) {
    float* o = out + (r - r0) * k;
    for (int64_t j = 0; j < w.groups; ++j) {
      const __m256 s = _mm256_set1_ps(scale_of<H>(w.scales, r * w.groups + j));
      const __m256 mn = kAsym ? _mm256_set1_ps(scale_of<H>(w.mins, r * w.groups + j)) : _mm256_setzero_ps();
      for (int64_t col = j * g; col < (j + 1) * g; col += 16) {
        __m256i ql, qh;
        load_q<F>(w.row(r), col, &ql, &qh);
        __m256 lo = dequant<F>(ql, s, mn), hi = dequant<F>(qh, s, mn);
        if constexpr (F == kQ4Sym || F == kQ4Asym) {  // even/odd columns back into order
          const __m256 a = _mm256_unpacklo_ps(lo, hi), b = _mm256_unpackhi_ps(lo, hi);
          lo = _mm256_permute2f128_ps(a, b, 0x20);
          hi = _mm256_permute2f128_ps(a, b, 0x31);
        }
        _mm256_storeu_ps(o + col, lo);
        _mm256_storeu_ps(o + col + 8, hi);
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

extern const LinearQF32Kernels kLinearQF32Avx2 = {gemv, dequantize};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
