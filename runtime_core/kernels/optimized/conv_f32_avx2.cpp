// pocket::conv2d_packed microkernels, AVX2 + FMA (x86-64): 8 floats per vector; tile 6
// positions x 16 channels (one block; the wide tile is the same). Loops: conv_f32_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Avx2 = {{conv_f32_tile_fn<Avx2F32, 6, 1>(), conv_f32_tile_fn<Avx2F32, 6, 1>(),
                                             conv_f32_tile_fn<Avx2F32, 6, 1>()},
                                            conv_f32_dw_row<Avx2F32>, max_pool_f32_row<Avx2F32>,
                                            wino_f32_in<Avx2F32>, wino_f32_out<Avx2F32>,
                                            conv_f32_tile_fn<Avx2F32, 6, 1>(),
                                            {conv_f32_tile_fn<Avx2F32, 6, 1>(), conv_f32_tile_fn<Avx2F32, 6, 1>(),
                                             conv_f32_tile_fn<Avx2F32, 6, 1>()}};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
