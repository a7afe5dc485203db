// The piecewise-linear activations of MobileNetV3; float dtypes only, as in torch:
// aten::hardsigmoid(Tensor self) -> Tensor     relu6(x + 3) / 6
// aten::hardswish(Tensor self) -> Tensor       x * relu6(x + 3) / 6
#include "elementwise_util.h"

namespace pocket {
namespace {

// relu6(x + 3); ATen divides by 6 last in both ops, and so do these.
template <typename T>
T relu6_shifted(T x) {
  const T r = x + T(3);
  return r < T(0) ? T(0) : (r > T(6) ? T(6) : r);
}

}  // namespace

Error op_hardsigmoid(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardsigmoid", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return relu6_shifted(x) / decltype(x)(6); });
}

Error op_hardswish(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardswish", args[0]->tensor, args[1]->tensor,
                             [](auto x) { return x * relu6_shifted(x) / decltype(x)(6); });
}

}  // namespace pocket
