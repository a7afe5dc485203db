// The piecewise-linear activations of MobileNetV3; float dtypes only, as in torch:
// aten::hardsigmoid(Tensor self) -> Tensor     relu6(x + 3) / 6
// aten::hardswish(Tensor self) -> Tensor       x * relu6(x + 3) / 6
#include "elementwise_util.h"

namespace pocket {
namespace {

template <typename T>
T hardsigmoid(T x) {
  T r = x + T(3);
  r = r < T(0) ? T(0) : (r > T(6) ? T(6) : r);
  return r / T(6);
}

}  // namespace

Error op_hardsigmoid(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardsigmoid", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return hardsigmoid(x); });
}

Error op_hardswish(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardswish", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return x * hardsigmoid(x); });
}

}  // namespace pocket
