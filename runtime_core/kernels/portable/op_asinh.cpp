// aten::asinh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_asinh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "asinh", args, [](auto x) { return std::asinh(x); });
}

}  // namespace pocket
