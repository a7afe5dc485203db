// aten::neg(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// -x in the output's dtype; integers wrap (unsigned too), bool is rejected as in torch.
Error op_neg(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "neg", out.dtype, args[0]->tensor, out,
                                                  [](auto x) { return detail::negate(x); });
}

}  // namespace pocket
