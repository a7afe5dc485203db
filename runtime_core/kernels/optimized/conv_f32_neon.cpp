// pocket::conv2d_packed microkernels, NEON (arm64): 4 floats per vector; tile 6 positions x
// 16 channels (one block; the wide tile is the same). Loops: conv_f32_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

}  // namespace

#include "conv_f32_tile.inc"

extern const ConvF32Kernels kConvF32Neon = {{conv_f32_tile_fn<NeonF32, 6, 1>(), conv_f32_tile_fn<NeonF32, 6, 1>(),
                                             conv_f32_tile_fn<NeonF32, 6, 1>()},
                                            conv_f32_dw_row<NeonF32>, max_pool_f32_row<NeonF32>,
                                            wino_f32_in<NeonF32>, wino_f32_out<NeonF32>,
                                            conv_f32_tile_fn<NeonF32, 6, 1>(),
                                            {conv_f32_tile_fn<NeonF32, 6, 1>(), conv_f32_tile_fn<NeonF32, 6, 1>(),
                                             conv_f32_tile_fn<NeonF32, 6, 1>()}};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
