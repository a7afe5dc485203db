// aten::isnan(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Bool output; integer and bool tensors have no NaN.
Error op_isnan(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  return detail::unary_predicate<detail::Kinds::All>(ctx, "isnan", in.dtype, in, args[1]->tensor,
                                                     [](auto x) { return detail::is_nan(x); });
}

}  // namespace pocket
