// pocket::linear_q_packed microkernels, NEON with the dot product extension (arm64
// FEAT_DotProd, Armv8.2+): SDOT over 4 broadcast activation bytes per lane. Traits:
// linear_qp_i8_arm.inc; tile and block loop: linear_qp_tile.inc.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))

namespace pocket {
namespace detail {

#include "linear_qp_i8_arm.inc"

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8NeonDot = {linear_qp_run<NeonDot>, linear_qp_quantize_row_neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
