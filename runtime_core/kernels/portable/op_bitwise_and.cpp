// aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer and bool dtypes only, computed in the output's dtype.
Error op_bitwise_and_tensor(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  return detail::binary_op<detail::Kinds::Integral>(ctx, "bitwise_and", out.dtype, args[0]->tensor,
                                                    args[1]->tensor, out,
                                                    [](auto x, auto y) { return x & y; });
}

}  // namespace pocket
