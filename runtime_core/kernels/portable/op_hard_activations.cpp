// The piecewise-linear activations of MobileNetV3; float dtypes only, as in torch:
// aten::hardsigmoid(Tensor self) -> Tensor     relu6(x + 3) / 6
// aten::hardswish(Tensor self) -> Tensor       x * relu6(x + 3) / 6
#include "elementwise_util.h"
#include "parts.h"

namespace pocket {

Error op_hardsigmoid(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardsigmoid", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return detail::hardsigmoid_of(x); });
}

Error op_hardswish(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardswish", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return detail::hardswish_of(x); });
}

}  // namespace pocket
