// aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer and bool dtypes only, computed in the output's dtype.
static Error bitwise_and(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<detail::Kinds::Integral>(ctx, "bitwise_and", out.dtype, a, b, out,
                                                    [](auto x, auto y) { return x & y; });
}

Error op_bitwise_and_tensor(KernelContext& ctx, Value** args) {
  return bitwise_and(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_bitwise_and_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return bitwise_and(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
