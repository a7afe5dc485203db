// fp32 GEMM microkernels, AVX2 + FMA (x86-64): 8 floats per vector; nt tiles of 3 x 4 rows,
// nn tiles of 6 rows x 16 columns. Serves aten::linear, mm, bmm, addmm and 1x1 convolutions
// through gemm.cpp. Loops: gemm_f32_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {
#include "avx2_helpers.inc"
}  // namespace

#include "gemm_f32_tile.inc"

extern const GemmKernels kGemmAvx2 = gemm_f32_kernels<Avx2F32, 3, 6, 2>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
