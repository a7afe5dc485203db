// pocket::linear_q with int8 activations (act_mode 1 and 2), baseline NEON (arm64 without
// the dot product extension): SMULL + SADALP, 32 columns per step. Body: linear_q_i8_arm.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

constexpr int kBigMr = 2, kBigNr = 4, kRowNr = 4;
constexpr bool kDot = false;
#include "quant_scales.inc"
#include "linear_q_i8_arm.inc"

extern const LinearQI8Kernels kLinearQI8Neon = {run, offset_of, &kLinearQPI8Neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
