// aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer and bool dtypes only, computed in the output's dtype.
static Error bitwise_or(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<detail::Kinds::Integral>(ctx, "bitwise_or", out.dtype, a, b, out,
                                                    [](auto x, auto y) { return x | y; });
}

Error op_bitwise_or_tensor(KernelContext& ctx, Value** args) {
  return bitwise_or(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_bitwise_or_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return bitwise_or(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
