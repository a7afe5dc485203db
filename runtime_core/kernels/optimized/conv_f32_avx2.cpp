// pocket::conv2d_packed microkernels, AVX2 + FMA (x86-64): 8 floats per vector; tile 6
// positions x 16 channels (one block; the wide tile is the same). Loops: conv_f32_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

struct Avx2 {
  using V = __m256;
  static constexpr int kLanes = 8, kDwVecs = 2;
  POCKET_TARGET static V zero() { return _mm256_setzero_ps(); }
  POCKET_TARGET static V load(const float* p) { return _mm256_loadu_ps(p); }
  POCKET_TARGET static V loadn(const float* p, int n) { return _mm256_maskload_ps(p, tail_mask(n)); }
  POCKET_TARGET static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  POCKET_TARGET static void storen(float* p, V v, int n) { _mm256_maskstore_ps(p, tail_mask(n), v); }
  POCKET_TARGET static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  POCKET_TARGET static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  POCKET_TARGET static V add(V a, V b) { return _mm256_add_ps(a, b); }
  // maxps/minps return their second operand when one is NaN: a NaN v stays NaN.
  POCKET_TARGET static V clamp(V v, float lo, float hi) {
    return _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), v));
  }
};

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Avx2 = {conv_f32_tile_fn<Avx2, 6, 1>(), conv_f32_tile_fn<Avx2, 6, 1>(),
                                            conv_f32_dw_row<Avx2>};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
