// aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
// aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
// aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Integer power by squaring, wrapping like torch (computed in uint64, which agrees modulo
// 2^bits). Negative exponents give 1 / base rounded toward zero, as torch does.
template <typename T>
static T int_pow(T base, T exp) {
  if constexpr (std::is_signed<T>::value) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return exp % 2 != 0 ? T(-1) : T(1);
      return 0;
    }
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

// Computed in the output's dtype.
static Error pow_op(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<detail::Kinds::Numeric>(ctx, "pow", out.dtype, a, b, out,
                                                   [](auto x, auto y) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::pow(x, y);
    } else {
      return int_pow(x, y);
    }
  });
}

Error op_pow_tensor_tensor(KernelContext& ctx, Value** args) {
  return pow_op(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_pow_tensor_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  const Value& exponent = *args[1];
  if (!is_floating(out.dtype) && exponent.is_integral_scalar() && exponent.to_double() < 0)
    return ctx.fail(Error::InvalidArgument,
                    "pow: integers to negative integer powers are not allowed (exponent %g)",
                    exponent.to_double());
  detail::ScalarTensor e(exponent, out.dtype);
  return pow_op(ctx, args[0]->tensor, e.tensor(), out);
}

Error op_pow_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor base(*args[0], out.dtype);
  return pow_op(ctx, base.tensor(), args[1]->tensor, out);
}

}  // namespace pocket
