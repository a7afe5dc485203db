// aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
// aten::mul.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Computed in the output's dtype; for bool, mul is logical and.
static Error mul(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<detail::Kinds::All>(ctx, "mul", out.dtype, a, b, out,
                                               [](auto x, auto y) { return x * y; });
}

Error op_mul_tensor(KernelContext& ctx, Value** args) {
  return mul(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_mul_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return mul(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
