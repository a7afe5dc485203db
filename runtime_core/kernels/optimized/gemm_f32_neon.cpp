// fp32 GEMM microkernels, NEON (arm64: Advanced SIMD is part of the base architecture).
// Serves aten::linear, mm, bmm, addmm and 1x1 convolutions through gemm.cpp.
//   nt: tiles of 4 rows of A x 4 rows of B, 4 floats of k per step; the 4 accumulators of
//       a row are reduced together with pairwise adds; k % 4 tail in scalar code.
//   nn: tiles of 6 rows of A x 16 columns of B (4 vectors), A broadcast, B from a packed
//       panel (16 columns x up to 256 rows of k, zero padded, on the stack).
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

constexpr int kNtMr = 4, kNtNr = 4, kNnMr = 6, kNnVecs = 4;

template <int MR, int NR>
void nt_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, const float* bias, float* c,
             int64_t ldc) {
  float32x4_t acc[MR][NR];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_f32(0.0f);
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    float32x4_t bv[NR];
    POCKET_UNROLL for (int j = 0; j < NR; ++j) bv[j] = vld1q_f32(b + j * ldb + p);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const float32x4_t av = vld1q_f32(a + i * lda + p);
      POCKET_UNROLL for (int j = 0; j < NR; ++j) acc[i][j] = vfmaq_f32(acc[i][j], av, bv[j]);
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i) {
    float sums[NR];
    if constexpr (NR == 4) {
      const float32x4_t s = vpaddq_f32(vpaddq_f32(acc[i][0], acc[i][1]), vpaddq_f32(acc[i][2], acc[i][3]));
      vst1q_f32(sums, s);
    } else {
      POCKET_UNROLL for (int j = 0; j < NR; ++j) sums[j] = vaddvq_f32(acc[i][j]);
    }
    POCKET_UNROLL for (int j = 0; j < NR; ++j) {
      float v = sums[j];
      for (int64_t t = p; t < k; ++t) v += a[i * lda + t] * b[j * ldb + t];
      c[i * ldc + j] = v + (bias != nullptr ? bias[j] : 0.0f);
    }
  }
}

using NtTile = void (*)(int64_t, const float*, int64_t, const float*, int64_t, const float*, float*, int64_t);

template <int MR>
struct NtRow {
  static constexpr NtTile tiles[kNtNr] = {nt_tile<MR, 1>, nt_tile<MR, 2>, nt_tile<MR, 3>, nt_tile<MR, 4>};
};
const NtTile* const kNtTiles[kNtMr] = {NtRow<1>::tiles, NtRow<2>::tiles, NtRow<3>::tiles, NtRow<4>::tiles};

void gemm_nt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
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
void nn_tile(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* panel, bool first,
             const float* bias, float* c, int64_t ldc, int64_t cols) {
  constexpr int64_t nr = 4 * kNnVecs;
  float buf[MR * nr];  // a partial tile goes through a full-width buffer
  float* out = c;
  int64_t ld = ldc;
  if (cols < nr) {
    for (int i = 0; i < MR; ++i)
      for (int64_t j = 0; j < nr; ++j) buf[i * nr + j] = !first && j < cols ? c[i * ldc + j] : 0.0f;
    out = buf;
    ld = nr;
  }
  float32x4_t acc[MR][kNnVecs];
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v)
      acc[i][v] = !first ? vld1q_f32(out + i * ld + 4 * v) : vdupq_n_f32(bias != nullptr ? bias[i] : 0.0f);
  const float* ap = a;
  for (int64_t p = 0; p < kc; ++p, ap += a_cs) {
    float32x4_t bv[kNnVecs];
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) bv[v] = vld1q_f32(panel + p * nr + 4 * v);
    POCKET_UNROLL for (int i = 0; i < MR; ++i) {
      const float32x4_t av = vld1q_dup_f32(ap + i * a_rs);
      POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) acc[i][v] = vfmaq_f32(acc[i][v], av, bv[v]);
    }
  }
  POCKET_UNROLL for (int i = 0; i < MR; ++i)
    POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) vst1q_f32(out + i * ld + 4 * v, acc[i][v]);
  if (cols < nr)
    for (int i = 0; i < MR; ++i)
      for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = buf[i * nr + j];
}

using NnTile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, bool, const float*, float*, int64_t,
                        int64_t);
const NnTile kNnTiles[kNnMr] = {nn_tile<1>, nn_tile<2>, nn_tile<3>, nn_tile<4>, nn_tile<5>, nn_tile<6>};

void pack_panel(const float* b, int64_t ldb, int64_t kc, int64_t cols, float* panel) {
  constexpr int64_t nr = 4 * kNnVecs;
  for (int64_t p = 0; p < kc; ++p) {
    if (cols == nr) {
      POCKET_UNROLL for (int v = 0; v < kNnVecs; ++v) vst1q_f32(panel + p * nr + 4 * v, vld1q_f32(b + p * ldb + 4 * v));
    } else {
      for (int64_t j = 0; j < nr; ++j) panel[p * nr + j] = j < cols ? b[p * ldb + j] : 0.0f;
    }
  }
}

void gemm_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b, int64_t ldb,
             const float* bias, float* c, int64_t ldc) {
  constexpr int64_t nr = 4 * kNnVecs, kKc = 256;
  alignas(16) float panel[kKc * nr];
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

extern const GemmKernels kGemmNeon = {gemm_nt, gemm_nn, kNtMr, kNtNr, kNnMr, kNnVecs * 4};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
