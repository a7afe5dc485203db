// aten::sinh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_sinh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "sinh", args, [](auto x) { return std::sinh(x); });
}

}  // namespace pocket
