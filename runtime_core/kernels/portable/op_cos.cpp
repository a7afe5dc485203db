// aten::cos(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_cos(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "cos", args, [](auto x) { return std::cos(x); });
}

}  // namespace pocket
