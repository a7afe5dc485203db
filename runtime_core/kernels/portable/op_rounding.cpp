// Rounding to integral values; integer tensors are copied unchanged, as in torch:
// aten::floor(Tensor self) -> Tensor            toward negative infinity
// aten::ceil(Tensor self) -> Tensor             toward positive infinity
// aten::trunc(Tensor self) -> Tensor            toward zero
// aten::round(Tensor self) -> Tensor            to nearest, halves to even (nearbyint in the
//                                               default rounding mode)
// aten::round.decimals(Tensor self, *, int decimals) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {
namespace {

// out = f(self) for floating dtypes, self for integral ones.
template <typename F>
Error round_to_integral(KernelContext& ctx, Value** args, const char* op, F f) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, op, out.dtype, args[0]->tensor, out, [&](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return f(x);
    } else {
      return x;
    }
  });
}

}  // namespace

Error op_floor(KernelContext& ctx, Value** args) {
  return round_to_integral(ctx, args, "floor", [](auto x) { return std::floor(x); });
}

Error op_ceil(KernelContext& ctx, Value** args) {
  return round_to_integral(ctx, args, "ceil", [](auto x) { return std::ceil(x); });
}

Error op_trunc(KernelContext& ctx, Value** args) {
  return round_to_integral(ctx, args, "trunc", [](auto x) { return std::trunc(x); });
}

Error op_round(KernelContext& ctx, Value** args) {
  return round_to_integral(ctx, args, "round", [](auto x) { return std::nearbyint(x); });
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
