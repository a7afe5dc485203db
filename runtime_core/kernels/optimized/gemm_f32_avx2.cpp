// fp32 GEMM microkernels, AVX2 + FMA (x86-64). Serves aten::linear, mm, bmm, addmm and 1x1
// convolutions through gemm.cpp.
//   nt: tiles of 3 rows of A x 4 rows of B, 8 floats of k per step, one accumulator per
//       output; the 4 accumulators of a row are reduced together (hadd) at the end.
//   nn: tiles of 6 rows of A x 16 columns of B (2 vectors), A broadcast, B from a packed
//       panel (16 columns x up to 256 rows of k, zero padded, on the stack).
// Tails: masked loads/stores for k (nt) and for columns (nn); smaller tile instantiations
// for the last rows and columns.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

constexpr int kNtMr = 3, kNtNr = 4, kNnMr = 6, kNnVecs = 2;

#include "avx2_helpers.inc"

// The sums of 4 vectors, as one vector of 4.
POCKET_TARGET inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // [a b c d | a b c d] partial sums per lane
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int MR, int NR>
POCKET_TARGET void nt_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, const float* bias,
                           float* c, int64_t ldc) {
  __m256 acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    __m256 bv[NR];
    POCKET_UNROLL for (int j = 0; j < NR; ++j) bv[j] = _mm256_loadu_ps(b + j * ldb + p);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_loadu_ps(a + i * lda + p);
      POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    __m256 bv[NR];
    POCKET_UNROLL for (int j = 0; j < NR; ++j) bv[j] = _mm256_maskload_ps(b + j * ldb + p, mask);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_maskload_ps(a + i * lda + p, mask);
      POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
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
const NtTile* const kNtTiles[kNtMr] = {NtRow<1>::tiles, NtRow<2>::tiles, NtRow<3>::tiles};

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

// MR rows x 16 columns over a packed panel of B (kc rows of 16 floats, zero padded):
// C = (first ? bias or 0 : C) + A · panel. Only the first `cols` columns of C are stored.
template <int MR>
POCKET_TARGET void nn_tile(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* panel, bool first,
                           const float* bias, float* c, int64_t ldc, int64_t cols) {
  constexpr int64_t nr = 8 * kNnVecs;
  // A partial tile goes through a full-width buffer: masked loads and stores here make
  // GCC keep the accumulators in memory.
  alignas(32) float buf[MR * nr];
  float* out = c;
  int64_t ld = ldc;
  if (cols < nr) {
    POCKET_UNROLL for (int i = 0; i < MR; ++i)
      for (int64_t j = 0; j < nr; ++j) buf[i * nr + j] = !first && j < cols ? c[i * ldc + j] : 0.0f;
    out = buf;
    ld = nr;
  }
  __m256 acc[MR][kNnVecs];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v)
      acc[i][v] = !first ? _mm256_loadu_ps(out + i * ld + 8 * v)
                         : bias != nullptr ? _mm256_broadcast_ss(bias + i) : _mm256_setzero_ps();
  const float* ap = a;
  for (int64_t p = 0; p < kc; ++p, ap += a_cs) {
    __m256 bv[kNnVecs];
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) bv[v] = _mm256_load_ps(panel + p * nr + 8 * v);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(ap + i * a_rs);
      POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) _mm256_storeu_ps(out + i * ld + 8 * v, acc[i][v]);
  if (cols < nr)
    POCKET_UNROLL for (int i = 0; i < MR; ++i)
      for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = buf[i * nr + j];
}

using NnTile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, bool, const float*, float*, int64_t,
                        int64_t);
const NnTile kNnTiles[kNnMr] = {nn_tile<1>, nn_tile<2>, nn_tile<3>, nn_tile<4>, nn_tile<5>, nn_tile<6>};

// Columns [j, j + cols) of B's rows [p0, p0 + kc) into panel (rows of 16, zero padded).
POCKET_TARGET void pack_panel(const float* b, int64_t ldb, int64_t kc, int64_t cols, float* panel) {
  constexpr int64_t nr = kNnVecs * 8;
  if (cols == nr) {
    for (int64_t p = 0; p < kc; ++p)
      POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) _mm256_store_ps(panel + p * nr + 8 * v, _mm256_loadu_ps(b + p * ldb + 8 * v));
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    for (int64_t j = 0; j < nr; ++j) panel[p * nr + j] = j < cols ? b[p * ldb + j] : 0.0f;
}

// Columns in panels of 16, k in blocks of kKc (the panel stays in L1 while every row tile
// of A passes over it).
POCKET_TARGET void gemm_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
                           int64_t ldb, const float* bias, float* c, int64_t ldc) {
  constexpr int64_t nr = kNnVecs * 8, kKc = 256;
  alignas(32) float panel[kKc * nr];
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

extern const GemmKernels kGemmAvx2 = {gemm_nt, gemm_nn, kNtMr, kNtNr, kNnMr, kNnVecs * 8};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
