// Elementwise maximum and minimum; NaN wins, as in torch:
// aten::maximum(Tensor self, Tensor other) -> Tensor
// aten::minimum(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

Error op_maximum(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  return detail::binary_op<detail::Kinds::All>(ctx, "maximum", out.dtype, args[0]->tensor, args[1]->tensor, out,
                                               [](auto x, auto y) { return detail::max_nan(x, y); });
}

Error op_minimum(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  return detail::binary_op<detail::Kinds::All>(ctx, "minimum", out.dtype, args[0]->tensor, args[1]->tensor, out,
                                               [](auto x, auto y) { return detail::min_nan(x, y); });
}

}  // namespace pocket
