// pocket::linear_q with int8 activations (act_mode 1 and 2), NEON with the dot product
// extension (arm64 FEAT_DotProd, Armv8.2+): SDOT, 32 columns per step. Body:
// linear_q_i8_arm.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))

namespace pocket {
namespace detail {

constexpr int kBigMr = 2, kBigNr = 4, kRowNr = 4;
constexpr bool kDot = true;
#include "quant_scales.inc"
#include "linear_q_i8_arm.inc"

extern const LinearQI8Kernels kLinearQI8NeonDot = {run, offset_of, &kLinearQPI8NeonDot};
#if POCKET_HAVE_I8MM
extern const LinearQI8Kernels kLinearQI8NeonI8mm = {run, offset_of, &kLinearQPI8NeonI8mm};
#endif

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
