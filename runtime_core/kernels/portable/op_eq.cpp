// aten::eq.Tensor(Tensor self, Tensor other) -> Tensor
// aten::eq.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self == other, compared in torch's promoted dtype; bool output.
Error op_eq_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "eq", args, [](auto x, auto y) { return x == y; });
}

Error op_eq_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "eq", args, [](auto x, auto y) { return x == y; });
}

}  // namespace pocket
