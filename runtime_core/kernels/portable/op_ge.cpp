// aten::ge.Tensor(Tensor self, Tensor other) -> Tensor
// aten::ge.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self >= other, compared in torch's promoted dtype; bool output.
Error op_ge_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "ge", args, [](auto x, auto y) { return x >= y; });
}

Error op_ge_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "ge", args, [](auto x, auto y) { return x >= y; });
}

}  // namespace pocket
