// aten::round(Tensor self) -> Tensor
// aten::round.decimals(Tensor self, *, int decimals) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Rounds to the nearest integer, halves to even (nearbyint in the default rounding mode);
// integer tensors are copied unchanged, as in torch.
Error op_round(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "round", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::nearbyint(x);
    } else {
      return x;
    }
  });
}

// Rounds to `decimals` decimal places as torch does: scale by 10^|decimals|, round half to
// even, scale back. Float dtypes only.
Error op_round_decimals(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  int64_t decimals = args[1]->i;
  bool neg = decimals < 0;
  double scale = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  return detail::unary_op<detail::Kinds::Floating>(ctx, "round", out.dtype, args[0]->tensor, out,
                                                   [&](auto x) {
    using T = decltype(x);
    T s = static_cast<T>(scale);
    return neg ? std::nearbyint(x / s) * s : std::nearbyint(x * s) / s;
  });
}

}  // namespace pocket
