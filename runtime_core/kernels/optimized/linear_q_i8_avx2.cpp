// pocket::linear_q with int8 activations (act_mode 1 and 2), AVX2 (x86-64): VPMADDUBSW +
// VPMADDWD integer dot products, 32 columns per step. Body: linear_q_i8_x86.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c")))

namespace pocket {
namespace detail {

constexpr int kBigMr = 2, kBigNr = 2, kRowNr = 4;
constexpr bool kVnni = false;
#include "quant_scales.inc"
#include "linear_q_i8_x86.inc"
#define POCKET_I8_BIG_TILE(MR, NR, F, MODE) tile<MR, NR, F, MODE>
#define POCKET_I8_ROW_TILE(NR, F, MODE) tile<1, NR, F, MODE>
#include "linear_q_i8_x86_run.inc"

extern const LinearQI8Kernels kLinearQI8Avx2 = {run, offset_of, &kLinearQPI8Avx2};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
