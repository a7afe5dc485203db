// pocket::linear_q with float32 activations (act_mode 0), AVX-512 F (x86-64): as
// linear_q_f32_avx2.cpp with 16 columns of a weight row dequantized into one vector (4-bit:
// 8 bytes, low nibbles then high nibbles, matching the permuted x).
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

#include "quant_scales.inc"

namespace {

enum Format { kQ4Sym, kQ4Asym, kQ8Sym, kQ8Asym };

Format format_of(const QuantWeight& w) {
  if (w.bits == 4) return w.symmetric() ? kQ4Sym : kQ4Asym;
  return w.symmetric() ? kQ8Sym : kQ8Asym;
}

// The 16 quantized values of columns [col, col + 16) of `row` as int8: 4-bit in
// `interleaved` order (natural column order) or as even columns then odd ones.
template <int F, bool kInterleaved>
POCKET_TARGET inline __m128i load_q8(const uint8_t* row, int64_t col) {
  if constexpr (F == kQ4Sym || F == kQ4Asym) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + col / 2));
    const __m128i nib = _mm_set1_epi8(0x0F);
    const __m128i l = _mm_and_si128(bytes, nib), h = _mm_and_si128(_mm_srli_epi16(bytes, 4), nib);
    __m128i q = kInterleaved ? _mm_unpacklo_epi8(l, h) : _mm_unpacklo_epi64(l, h);
    if constexpr (F == kQ4Sym) q = _mm_sub_epi8(q, _mm_set1_epi8(8));
    return q;
  } else {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + col));
  }
}

template <int F>
POCKET_TARGET inline __m512 dequant(__m128i q8, __m512 s, __m512 mn) {
  const __m512i q = F == kQ8Asym ? _mm512_cvtepu8_epi32(q8) : _mm512_cvtepi8_epi32(q8);
  const __m512 w = _mm512_mul_ps(_mm512_cvtepi32_ps(q), s);
  if constexpr (F == kQ4Asym || F == kQ8Asym) return _mm512_add_ps(w, mn);
  return w;
}

POCKET_TARGET inline float hsum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int MR, int NR, int F, bool H>
POCKET_TARGET void gemv_tile(const float* x, int64_t k, const QuantWeight& w, int64_t c, const float* bias, float* y,
                             int64_t ldy) {
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  __m512 acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r) acc[i][r] = _mm512_setzero_ps();
  const int64_t g = w.group_size;
  TileScales<NR, H, kAsym> ts;
  for (int64_t j0 = 0; j0 < w.groups; j0 += kWiden) {
    const int64_t jn = w.groups - j0 < kWiden ? w.groups - j0 : kWiden;
    ts.load(w, c, j0, jn);
    for (int64_t jj = 0; jj < jn; ++jj) {
      const int64_t j = j0 + jj;
      __m512 s[NR], mn[NR];
      POCKET_UNROLL for (int r = 0; r < NR; ++r) {
        s[r] = _mm512_set1_ps(ts.scale(r, jj));
        mn[r] = kAsym ? _mm512_set1_ps(ts.min(r, jj)) : _mm512_setzero_ps();
      }
      for (int64_t col = j * g; col < (j + 1) * g; col += 16) {
        __m512 wv[NR];
        POCKET_UNROLL for (int r = 0; r < NR; ++r) wv[r] = dequant<F>(load_q8<F, false>(w.row(c + r), col), s[r], mn[r]);
        POCKET_UNROLL for (int i = 0; i < MR; ++i) {
          const __m512 xv = _mm512_loadu_ps(x + i * k + col);
          POCKET_UNROLL for (int r = 0; r < NR; ++r) acc[i][r] = _mm512_fmadd_ps(wv[r], xv, acc[i][r]);
        }
      }
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int r = 0; r < NR; ++r)
      y[i * ldy + c + r] = hsum(acc[i][r]) + (bias != nullptr ? bias[c + r] : 0.0f);
}

using GemvTile = void (*)(const float*, int64_t, const QuantWeight&, int64_t, const float*, float*, int64_t);

template <int F, bool H>
struct GemvTiles {
  static constexpr GemvTile tiles[4][2] = {
      {gemv_tile<1, 4, F, H>, gemv_tile<1, 1, F, H>},
      {gemv_tile<2, 4, F, H>, gemv_tile<2, 1, F, H>},
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
  const int64_t nr = m <= 2 ? 4 : 2;
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
      const __m512 s = _mm512_set1_ps(scale_of<H>(w.scales, r * w.groups + j));
      const __m512 mn = kAsym ? _mm512_set1_ps(scale_of<H>(w.mins, r * w.groups + j)) : _mm512_setzero_ps();
      for (int64_t col = j * g; col < (j + 1) * g; col += 16)
        _mm512_storeu_ps(o + col, dequant<F>(load_q8<F, true>(w.row(r), col), s, mn));
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

extern const LinearQF32Kernels kLinearQF32Avx512 = {gemv, dequantize};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
