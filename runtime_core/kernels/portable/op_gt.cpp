// aten::gt.Tensor(Tensor self, Tensor other) -> Tensor
// aten::gt.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self > other, compared in torch's promoted dtype; bool output.
Error op_gt_tensor(KernelContext& ctx, Value** args) {
  return detail::compare_tensors(ctx, "gt", args, [](auto x, auto y) { return x > y; });
}

Error op_gt_scalar(KernelContext& ctx, Value** args) {
  return detail::compare_scalar(ctx, "gt", args, [](auto x, auto y) { return x > y; });
}

}  // namespace pocket
