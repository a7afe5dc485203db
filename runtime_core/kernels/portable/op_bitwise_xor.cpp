// aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer and bool dtypes only, computed in the output's dtype.
static Error bitwise_xor(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<detail::Kinds::Integral>(ctx, "bitwise_xor", out.dtype, a, b, out,
                                                    [](auto x, auto y) { return x ^ y; });
}

Error op_bitwise_xor_tensor(KernelContext& ctx, Value** args) {
  return bitwise_xor(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_bitwise_xor_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return bitwise_xor(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
