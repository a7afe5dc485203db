// aten::ne.Tensor(Tensor self, Tensor other) -> Tensor
// aten::ne.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self != other, compared in torch's promoted dtype; bool output.
Error op_ne_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "ne", args, [](auto x, auto y) { return x != y; });
}

Error op_ne_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "ne", args, [](auto x, auto y) { return x != y; });
}

}  // namespace pocket
