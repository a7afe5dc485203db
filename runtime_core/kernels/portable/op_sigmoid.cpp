// aten::sigmoid(Tensor self) -> Tensor
#include "elementwise_util.h"
#include "parts.h"

namespace pocket {

// 1 / (1 + exp(-x)); integer inputs give a float output, as in torch.
Error op_sigmoid(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "sigmoid", args, [](auto x) { return detail::sigmoid_of(x); });
}

}  // namespace pocket
