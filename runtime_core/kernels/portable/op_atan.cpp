// aten::atan(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_atan(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "atan", args, [](auto x) { return std::atan(x); });
}

}  // namespace pocket
