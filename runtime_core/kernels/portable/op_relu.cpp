// aten::relu(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

Error op_relu(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "relu", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return x > 0 ? x : decltype(x)(0); });
}

}  // namespace pocket
