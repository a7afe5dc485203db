// fp32 GEMM microkernels, AVX2 + FMA (x86-64). Serves aten::linear, mm, bmm, addmm and 1x1
// convolutions through gemm.cpp.
//   nt: tiles of 3 rows of A x 4 rows of B, 8 floats of k per step, one accumulator per
//       output; the 4 accumulators of a row are reduced together (hadd) at the end.
//   nn: tiles of 6 rows of A x 16 columns of B (2 vectors), A broadcast, B loaded.
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

const int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
POCKET_TARGET inline __m256i tail_mask(int64_t n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}

POCKET_TARGET inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

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
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    __m256 bv[NR];
    for (int j = 0; j < NR; ++j) bv[j] = _mm256_loadu_ps(b + j * ldb + p);
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_loadu_ps(a + i * lda + p);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  if (p < k) {
    const __m256i mask = tail_mask(k - p);
    __m256 bv[NR];
    for (int j = 0; j < NR; ++j) bv[j] = _mm256_maskload_ps(b + j * ldb + p, mask);
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_maskload_ps(a + i * lda + p, mask);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    if constexpr (NR == 4) {
      __m128 s = hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      if (bias != nullptr) s = _mm_add_ps(s, _mm_loadu_ps(bias));
      _mm_storeu_ps(c + i * ldc, s);
    } else {
      for (int j = 0; j < NR; ++j) c[i * ldc + j] = hsum(acc[i][j]) + (bias != nullptr ? bias[j] : 0.0f);
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

// MR rows x (kNnVecs * 8) columns; MASKED: only the first `cols` columns exist.
template <int MR, bool MASKED>
POCKET_TARGET void nn_tile(int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t ldb,
                           const float* bias, float* c, int64_t ldc, int64_t cols) {
  __m256i mask[kNnVecs];
  for (int v = 0; v < kNnVecs; ++v) {
    int64_t left = cols - 8 * v;
    mask[v] = tail_mask(left < 0 ? 0 : left > 8 ? 8 : left);
  }
  __m256 acc[MR][kNnVecs];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNnVecs; ++v) acc[i][v] = bias != nullptr ? _mm256_broadcast_ss(bias + i) : _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    __m256 bv[kNnVecs];
    for (int v = 0; v < kNnVecs; ++v)
      bv[v] = MASKED ? _mm256_maskload_ps(b + p * ldb + 8 * v, mask[v]) : _mm256_loadu_ps(b + p * ldb + 8 * v);
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i * a_rs + p * a_cs);
      for (int v = 0; v < kNnVecs; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < kNnVecs; ++v) {
      if (MASKED)
        _mm256_maskstore_ps(c + i * ldc + 8 * v, mask[v], acc[i][v]);
      else
        _mm256_storeu_ps(c + i * ldc + 8 * v, acc[i][v]);
    }
}

using NnTile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, const float*, float*, int64_t,
                        int64_t);
const NnTile kNnTiles[2][kNnMr] = {
    {nn_tile<1, false>, nn_tile<2, false>, nn_tile<3, false>, nn_tile<4, false>, nn_tile<5, false>, nn_tile<6, false>},
    {nn_tile<1, true>, nn_tile<2, true>, nn_tile<3, true>, nn_tile<4, true>, nn_tile<5, true>, nn_tile<6, true>},
};

POCKET_TARGET void gemm_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
                           int64_t ldb, const float* bias, float* c, int64_t ldc) {
  constexpr int64_t nr = kNnVecs * 8;
  for (int64_t j = 0; j < n; j += nr) {
    const int64_t cols = n - j < nr ? n - j : nr;
    for (int64_t i = 0; i < m; i += kNnMr) {
      const int64_t mr = m - i < kNnMr ? m - i : kNnMr;
      kNnTiles[cols < nr][mr - 1](k, a + i * a_rs, a_rs, a_cs, b + j, ldb, bias != nullptr ? bias + i : nullptr,
                                  c + i * ldc + j, ldc, cols);
    }
  }
}

}  // namespace

extern const GemmKernels kGemmAvx2 = {gemm_nt, gemm_nn, kNtMr, kNtNr, kNnMr, kNnVecs * 8};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
