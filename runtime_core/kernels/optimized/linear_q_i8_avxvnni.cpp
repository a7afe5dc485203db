// pocket::linear_q with int8 activations (act_mode 1 and 2), AVX-VNNI (x86-64 without
// AVX-512): the VEX-encoded VPDPBUSD (u8 x s8, 4-way, into int32), 32 columns per step.
// Body: linear_q_i8_x86.inc, its 256-bit tiles.
#include "ukernels.h"
#if defined(__x86_64__) && POCKET_HAVE_AVXVNNI

#include <immintrin.h>

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avxvnni")))
#define POCKET_DPBUSD256 _mm256_dpbusd_avx_epi32

namespace pocket {
namespace detail {

constexpr int kBigMr = 2, kBigNr = 4, kRowNr = 4;
constexpr bool kVnni = true;
#include "quant_scales.inc"
#include "linear_q_i8_x86.inc"
#define POCKET_I8_BIG_TILE(MR, NR, F, MODE) tile<MR, NR, F, MODE>
#define POCKET_I8_ROW_TILE(NR, F, MODE) tile<1, NR, F, MODE>
#include "linear_q_i8_x86_run.inc"

extern const LinearQI8Kernels kLinearQI8AvxVnni = {run, offset_of, &kLinearQPI8AvxVnni};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__ && POCKET_HAVE_AVXVNNI
