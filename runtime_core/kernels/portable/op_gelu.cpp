// aten::gelu(Tensor self, *, str approximate="none") -> Tensor
#include "elementwise_util.h"

namespace pocket {

// "none": x * Phi(x) with the normal CDF from erf; "tanh": the tanh approximation.
Error op_gelu(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  const Value& approximate = *args[1];
  Tensor& out = args[2]->tensor;
  if (detail::string_is(approximate, "none"))
    return detail::unary_float(ctx, "gelu", in, out, [](auto x) {
      using T = decltype(x);
      const T inv_sqrt2 = T(0.70710678118654752440);
      return T(0.5) * x * (T(1) + std::erf(x * inv_sqrt2));
    });
  if (detail::string_is(approximate, "tanh"))
    return detail::unary_float(ctx, "gelu", in, out, [](auto x) {
      using T = decltype(x);
      const T sqrt_2_over_pi = T(0.79788456080286535588);
      T inner = sqrt_2_over_pi * (x + T(0.044715) * x * x * x);
      return T(0.5) * x * (T(1) + std::tanh(inner));
    });
  return ctx.fail(Error::InvalidArgument,
                  "gelu: approximate '%.*s' is not supported (expected 'none' or 'tanh')",
                  static_cast<int>(approximate.str.size), approximate.str.data);
}

}  // namespace pocket
