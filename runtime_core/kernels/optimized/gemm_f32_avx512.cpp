// fp32 GEMM microkernels, AVX-512 F (x86-64). Same structure as gemm_f32_avx2.cpp with 16
// floats per vector and mask registers for every tail:
//   nt: tiles of 4 rows of A x 4 rows of B; nn: tiles of 8 rows of A x 32 columns of B
//   (from a packed panel of up to 256 rows of k on the stack).
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

namespace {

constexpr int kNtMr = 4, kNtNr = 4, kNnMr = 8, kNnVecs = 2;

POCKET_TARGET inline __mmask16 tail_mask(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

// The two 256-bit halves added.
POCKET_TARGET inline __m256 half_sum(__m512 v) {
  return _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE)));
}

POCKET_TARGET inline float hsum(__m512 v) {
  const __m256 h = half_sum(v);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

POCKET_TARGET inline __m128 hsum4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m256 ab = _mm256_hadd_ps(half_sum(a), half_sum(b)), cd = _mm256_hadd_ps(half_sum(c), half_sum(d));
  const __m256 abcd = _mm256_hadd_ps(ab, cd);
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int MR, int NR>
POCKET_TARGET void nt_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, const float* bias,
                           float* c, int64_t ldc) {
  __m512 acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    __m512 bv[NR];
    POCKET_UNROLL for (int j = 0; j < NR; ++j) bv[j] = _mm512_loadu_ps(b + j * ldb + p);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_loadu_ps(a + i * lda + p);
      POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  if (p < k) {
    const __mmask16 mask = tail_mask(k - p);
    __m512 bv[NR];
    POCKET_UNROLL for (int j = 0; j < NR; ++j) bv[j] = _mm512_maskz_loadu_ps(mask, b + j * ldb + p);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_maskz_loadu_ps(mask, a + i * lda + p);
      POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i) {
    if constexpr (NR == 4) {
      __m128 s = hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      if (bias != nullptr) s = _mm_add_ps(s, _mm_loadu_ps(bias));
      _mm_storeu_ps(c + i * ldc, s);
    } else {
      POCKET_UNROLL for (int j = 0; j < NR; ++j) c[i * ldc + j] = hsum(acc[i][j]) + (bias != nullptr ? bias[j] : 0.0f);
    }
  }
}

using NtTile = void (*)(int64_t, const float*, int64_t, const float*, int64_t, const float*, float*, int64_t);

template <int MR>
struct NtRow {
  static constexpr NtTile tiles[kNtNr] = {nt_tile<MR, 1>, nt_tile<MR, 2>, nt_tile<MR, 3>, nt_tile<MR, 4>};
};
const NtTile* const kNtTiles[kNtMr] = {NtRow<1>::tiles, NtRow<2>::tiles, NtRow<3>::tiles, NtRow<4>::tiles};

POCKET_TARGET void gemm_nt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                           const float* bias, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += kNtMr) {
    const int64_t mr = m - i < kNtMr ? m - i : kNtMr;
    for (int64_t j = 0; j < n; j += kNtNr) {
      const int64_t nr = n - j < kNtNr ? n - j : kNtNr;
      kNtTiles[mr - 1][nr - 1](k, a + i * lda, lda, b + j * ldb, ldb, bias != nullptr ? bias + j : nullptr,
                               c + i * ldc + j, ldc);
    }
  }
}

// MR rows x 32 columns over a packed panel of B (kc rows of 32 floats, zero padded):
// C = (first ? bias or 0 : C) + A · panel. Only the first `cols` columns of C are stored.
template <int MR>
POCKET_TARGET void nn_tile(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* panel, bool first,
                           const float* bias, float* c, int64_t ldc, int64_t cols) {
  __mmask16 mask[kNnVecs];
  POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) mask[v] = tail_mask(cols - 16 * v);
  __m512 acc[MR][kNnVecs];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) {
      if (!first)
        acc[i][v] = _mm512_maskz_loadu_ps(mask[v], c + i * ldc + 16 * v);
      else
        acc[i][v] = bias != nullptr ? _mm512_set1_ps(bias[i]) : _mm512_setzero_ps();
    }
  for (int64_t p = 0; p < kc; ++p) {
    __m512 bv[kNnVecs];
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) bv[v] = _mm512_load_ps(panel + p * 16 * kNnVecs + 16 * v);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * a_rs + p * a_cs]);
      POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) _mm512_mask_storeu_ps(c + i * ldc + 16 * v, mask[v], acc[i][v]);
}

using NnTile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, bool, const float*, float*, int64_t,
                        int64_t);
const NnTile kNnTiles[kNnMr] = {nn_tile<1>, nn_tile<2>, nn_tile<3>, nn_tile<4>,
                                nn_tile<5>, nn_tile<6>, nn_tile<7>, nn_tile<8>};

// Columns [j, j + cols) of B's rows [p0, p0 + kc) into panel (rows of 32, zero padded).
POCKET_TARGET void pack_panel(const float* b, int64_t ldb, int64_t kc, int64_t cols, float* panel) {
  constexpr int64_t nr = kNnVecs * 16;
  __mmask16 mask[kNnVecs];
  POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) mask[v] = tail_mask(cols - 16 * v);
  for (int64_t p = 0; p < kc; ++p)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v)
      _mm512_store_ps(panel + p * nr + 16 * v, _mm512_maskz_loadu_ps(mask[v], b + p * ldb + 16 * v));
}

// Columns in panels of 32, k in blocks of kKc (the panel stays in L1 while every row tile
// of A passes over it).
POCKET_TARGET void gemm_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
                           int64_t ldb, const float* bias, float* c, int64_t ldc) {
  constexpr int64_t nr = kNnVecs * 16, kKc = 256;
  alignas(64) float panel[kKc * nr];
  for (int64_t j = 0; j < n; j += nr) {
    const int64_t cols = n - j < nr ? n - j : nr;
    for (int64_t p0 = 0; p0 < k || p0 == 0; p0 += kKc) {
      const int64_t kc = k - p0 < kKc ? k - p0 : kKc;
      pack_panel(b + p0 * ldb + j, ldb, kc, cols, panel);
      for (int64_t i = 0; i < m; i += kNnMr) {
        const int64_t mr = m - i < kNnMr ? m - i : kNnMr;
        kNnTiles[mr - 1](kc, a + i * a_rs + p0 * a_cs, a_rs, a_cs, panel, p0 == 0,
                         bias != nullptr ? bias + i : nullptr, c + i * ldc + j, ldc, cols);
      }
    }
  }
}

}  // namespace

extern const GemmKernels kGemmAvx512 = {gemm_nt, gemm_nn, kNtMr, kNtNr, kNnMr, kNnVecs * 16};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
