// aten::le.Tensor(Tensor self, Tensor other) -> Tensor
// aten::le.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self <= other, compared in torch's promoted dtype; bool output.
Error op_le_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "le", args, [](auto x, auto y) { return x <= y; });
}

Error op_le_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "le", args, [](auto x, auto y) { return x <= y; });
}

}  // namespace pocket
