// aten::acosh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_acosh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "acosh", args, [](auto x) { return std::acosh(x); });
}

}  // namespace pocket
