// Integer division by zero is an error; floats follow IEEE:
// aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor            C's fmod / %: the sign of
// aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor            the dividend
// aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor       Python's %: the sign of
// aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor       the divisor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {
namespace {

template <typename FloatOp, typename IntOp>
Error modulo(KernelContext& ctx, Value** args, const char* op, FloatOp float_op, IntOp int_op) {
  return detail::binary_overloads(ctx, args, [&](KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out) {
    bool zero_divisor = false;
    Error e = detail::binary_op<detail::Kinds::Numeric>(c, op, out.dtype, a, b, out, [&](auto x, auto y) {
      using T = decltype(x);
      if constexpr (std::is_floating_point<T>::value) {
        return float_op(x, y);
      } else {
        if (y == 0) {
          zero_divisor = true;
          return T(0);
        }
        return int_op(x, y);
      }
    });
    if (e == Error::Ok && zero_divisor) return c.fail(Error::InvalidArgument, "%s: integer division by zero", op);
    return e;
  });
}

Error fmod_op(KernelContext& ctx, Value** args) {
  return modulo(ctx, args, "fmod", [](auto x, auto y) { return std::fmod(x, y); },
                [](auto x, auto y) { return detail::fmod_int(x, y); });
}

Error remainder_op(KernelContext& ctx, Value** args) {
  return modulo(ctx, args, "remainder", [](auto x, auto y) { return detail::remainder_float(x, y); },
                [](auto x, auto y) { return detail::remainder_int(x, y); });
}

}  // namespace

Error op_fmod_tensor(KernelContext& ctx, Value** args) { return fmod_op(ctx, args); }
Error op_fmod_scalar(KernelContext& ctx, Value** args) { return fmod_op(ctx, args); }
Error op_remainder_tensor(KernelContext& ctx, Value** args) { return remainder_op(ctx, args); }
Error op_remainder_scalar(KernelContext& ctx, Value** args) { return remainder_op(ctx, args); }

}  // namespace pocket
