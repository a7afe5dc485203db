// aten::div.Tensor(Tensor self, Tensor other) -> Tensor
// aten::div.Scalar(Tensor self, Scalar other) -> Tensor
// aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
// aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

using detail::Kinds;

// True division: the output is floating (torch promotes integer inputs).
static Error div_true(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  return detail::binary_op<Kinds::Floating>(ctx, "div", out.dtype, a, b, out,
                                            [](auto x, auto y) { return x / y; });
}

// rounding_mode is a String; the exporter writes "" for None.
static Error div_mode(KernelContext& ctx, const Tensor& a, const Tensor& b, const Value& mode,
                      Tensor& out) {
  bool trunc = detail::string_is(mode, "trunc");
  if (detail::string_is(mode, "")) return div_true(ctx, a, b, out);
  if (!trunc && !detail::string_is(mode, "floor"))
    return ctx.fail(Error::InvalidArgument,
                    "div: rounding_mode '%.*s' is not supported (expected 'trunc', 'floor' or None)",
                    static_cast<int>(mode.str.size), mode.str.data);
  bool zero_divisor = false;  // integer division by zero: an error, as in torch
  Error e = detail::binary_op<Kinds::Numeric>(ctx, "div", out.dtype, a, b, out, [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point<T>::value) {
      return trunc ? std::trunc(x / y) : detail::div_floor_float(x, y);
    } else {
      if (y == 0) {
        zero_divisor = true;
        return T(0);
      }
      return trunc ? detail::div_trunc_int(x, y) : detail::div_floor_int(x, y);
    }
  });
  if (e == Error::Ok && zero_divisor)
    return ctx.fail(Error::InvalidArgument, "div: integer division by zero");
  return e;
}

Error op_div_tensor(KernelContext& ctx, Value** args) {
  return div_true(ctx, args[0]->tensor, args[1]->tensor, args[2]->tensor);
}

Error op_div_scalar(KernelContext& ctx, Value** args) {
  Tensor& out = args[2]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return div_true(ctx, args[0]->tensor, other.tensor(), out);
}

Error op_div_tensor_mode(KernelContext& ctx, Value** args) {
  return div_mode(ctx, args[0]->tensor, args[1]->tensor, *args[2], args[3]->tensor);
}

Error op_div_scalar_mode(KernelContext& ctx, Value** args) {
  Tensor& out = args[3]->tensor;
  detail::ScalarTensor other(*args[1], out.dtype);
  return div_mode(ctx, args[0]->tensor, other.tensor(), *args[2], out);
}

}  // namespace pocket
