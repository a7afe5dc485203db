// aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// self + alpha * other, computed in the output's dtype (bool + bool is logical or).
static Error add(KernelContext& ctx, const Tensor& a, const Tensor& b, const Value& alpha,
                 Tensor& out) {
  using detail::Kinds;
  if (alpha.to_double() == 1.0)
    return detail::binary_op<Kinds::All>(ctx, "add", out.dtype, a, b, out,
                                          [](auto x, auto y) { return x + y; });
  return detail::binary_op<Kinds::All>(ctx, "add", out.dtype, a, b, out, [&](auto x, auto y) {
    return x + detail::scalar_as<decltype(x)>(alpha) * y;
  });
}

Error op_add_tensor(KernelContext& ctx, Value** args) {
  return add(ctx, args[0]->tensor, args[1]->tensor, *args[2], args[3]->tensor);
}

Error op_add_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[3]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return add(ctx, args[0]->tensor, other.tensor(), *args[2], out);
}

}  // namespace pocket
