// aten::cosh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_cosh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "cosh", args, [](auto x) { return std::cosh(x); });
}

}  // namespace pocket
