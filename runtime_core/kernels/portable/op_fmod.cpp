// aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor
// aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// C's fmod / %: the result has the sign of the dividend. Integer fmod by zero is an error.
static Error fmod_op(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  bool zero_divisor = false;
  Error e = detail::binary_op<detail::Kinds::Numeric>(ctx, "fmod", out.dtype, a, b, out,
                                                      [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point<T>::value) {
      return std::fmod(x, y);
    } else {
      if (y == 0) {
        zero_divisor = true;
        return T(0);
      }
      return detail::fmod_int(x, y);
    }
  });
  if (e == Error::Ok && zero_divisor)
    return ctx.fail(Error::InvalidArgument, "fmod: integer division by zero");
  return e;
}

Error op_fmod_tensor(KernelContext& ctx, Value** args) {
  return fmod_op(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_fmod_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return fmod_op(ctx, args[0]->tensor, other.tensor(), out);
}

}  // namespace pocket
