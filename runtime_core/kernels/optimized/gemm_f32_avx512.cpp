// fp32 GEMM microkernels, AVX-512 F (x86-64): 16 floats per vector, mask registers for every
// tail; nt tiles of 4 x 4 rows, nn tiles of 8 rows x 32 columns. Serves aten::linear, mm,
// bmm, addmm and 1x1 convolutions through gemm.cpp. Loops: gemm_f32_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

namespace {
#include "avx512_helpers.inc"
}  // namespace

#include "gemm_f32_tile.inc"

extern const GemmKernels kGemmAvx512 = gemm_f32_kernels<Avx512F32, 4, 8, 2>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
