// aten::tanh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_tanh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "tanh", args, [](auto x) { return std::tanh(x); });
}

}  // namespace pocket
