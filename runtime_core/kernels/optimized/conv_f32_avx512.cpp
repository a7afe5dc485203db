// pocket::conv2d_packed microkernels, AVX-512 F (x86-64): 16 floats per vector (one block of
// channels), tiles 8 (or 7) positions x 16, 32 or 48 channels. Loops: conv_f32_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

namespace {

#include "avx512_helpers.inc"

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Avx512 = {{conv_f32_tile_fn<Avx512F32, 8, 1>(), conv_f32_tile_fn<Avx512F32, 8, 2>(),
                                               conv_f32_tile_fn<Avx512F32, 8, 3>()},
                                              conv_f32_dw_row<Avx512F32>, max_pool_f32_row<Avx512F32>,
                                              wino_f32_in<Avx512F32>, wino_f32_out<Avx512F32>,
                                              conv_f32_tile_fn<Avx512F32, 4, 2>(),
                                              {conv_f32_tile_fn<Avx512F32, 7, 1>(), conv_f32_tile_fn<Avx512F32, 7, 2>(),
                                               conv_f32_tile_fn<Avx512F32, 7, 3>()}};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
