// aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor
// aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Python's %: the result has the sign of the divisor. Integer remainder by zero is an error.
static Error remainder_op(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  bool zero_divisor = false;
  Error e = detail::binary_op<detail::Kinds::Numeric>(ctx, "remainder", out.dtype, a, b, out,
                                                      [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point<T>::value) {
      return detail::remainder_float(x, y);
    } else {
      if (y == 0) {
        zero_divisor = true;
        return T(0);
      }
      return detail::remainder_int(x, y);
    }
  });
  if (e == Error::Ok && zero_divisor)
    return ctx.fail(Error::InvalidArgument, "remainder: integer division by zero");
  return e;
}

Error op_remainder_tensor(KernelContext& ctx, Value** args) {
  return remainder_op(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_remainder_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return remainder_op(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
