// fp32 GEMM microkernels, NEON (arm64: Advanced SIMD is part of the base architecture): 4
// floats per vector; nt tiles of 4 x 4 rows, nn tiles of 6 rows x 16 columns. Serves
// aten::linear, mm, bmm, addmm and 1x1 convolutions through gemm.cpp. Loops:
// gemm_f32_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {
#include "neon_helpers.inc"
}  // namespace

#include "gemm_f32_tile.inc"

extern const GemmKernels kGemmNeon = gemm_f32_kernels<NeonF32, 4, 6, 4>();

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
