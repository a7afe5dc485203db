// aten::sin(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_sin(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "sin", args, [](auto x) { return std::sin(x); });
}

}  // namespace pocket
