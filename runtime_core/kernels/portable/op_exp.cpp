// aten::exp(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_exp(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "exp", args, [](auto x) { return std::exp(x); });
}

}  // namespace pocket
