// aten::lt.Tensor(Tensor self, Tensor other) -> Tensor
// aten::lt.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self < other, compared in torch's promoted dtype; bool output.
Error op_lt_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "lt", args, [](auto x, auto y) { return x < y; });
}

Error op_lt_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "lt", args, [](auto x, auto y) { return x < y; });
}

}  // namespace pocket
