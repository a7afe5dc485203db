// pocket::conv2d_packed microkernels, AVX-512 F (x86-64): 16 floats per vector (one block of
// channels), tiles 8 positions x 16 or 32 channels. Loops: conv_f32_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

namespace {

POCKET_TARGET inline __mmask16 lanes(int n) { return static_cast<__mmask16>((1u << n) - 1); }

struct Avx512 {
  using V = __m512;
  static constexpr int kLanes = 16, kDwVecs = 4;
  POCKET_TARGET static V zero() { return _mm512_setzero_ps(); }
  POCKET_TARGET static V load(const float* p) { return _mm512_loadu_ps(p); }
  POCKET_TARGET static V loadn(const float* p, int n) { return _mm512_maskz_loadu_ps(lanes(n), p); }
  POCKET_TARGET static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  POCKET_TARGET static void storen(float* p, V v, int n) { _mm512_mask_storeu_ps(p, lanes(n), v); }
  POCKET_TARGET static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  POCKET_TARGET static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  POCKET_TARGET static V add(V a, V b) { return _mm512_add_ps(a, b); }
  // maxps/minps return their second operand when one is NaN: a NaN v stays NaN.
  POCKET_TARGET static V clamp(V v, float lo, float hi) {
    return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), v));
  }
};

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Avx512 = {conv_f32_tile_fn<Avx512, 8, 1>(), conv_f32_tile_fn<Avx512, 8, 2>(),
                                              conv_f32_dw_row<Avx512>};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
