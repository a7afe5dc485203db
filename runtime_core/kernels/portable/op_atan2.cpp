// aten::atan2(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Floating output; integer inputs are converted (torch promotes them).
Error op_atan2(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  return detail::binary_op<detail::Kinds::Floating>(ctx, "atan2", out.dtype, args[0]->tensor,
                                                    args[1]->tensor, out,
                                                    [](auto y, auto x) { return std::atan2(y, x); });
}

}  // namespace pocket
