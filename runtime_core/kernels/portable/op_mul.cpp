// aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
// aten::mul.Scalar(Tensor self, Scalar other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Computed in the output's dtype; for bool, mul is logical and.
static Error mul(KernelContext& ctx, Value** args) {
  return detail::binary_overloads(ctx, args, [](KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out) {
    return detail::binary_op<detail::Kinds::All>(c, "mul", out.dtype, a, b, out, [](auto x, auto y) { return x * y; });
  });
}

Error op_mul_tensor(KernelContext& ctx, Value** args) { return mul(ctx, args); }
Error op_mul_scalar(KernelContext& ctx, Value** args) { return mul(ctx, args); }

}  // namespace pocket
