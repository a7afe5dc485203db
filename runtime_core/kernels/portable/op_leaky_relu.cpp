// aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// x for x > 0, else x * negative_slope; float dtypes only, as in torch.
Error op_leaky_relu(KernelContext& ctx, Value** args) {
  double slope = args[1]->to_double();
  return detail::unary_float(ctx, "leaky_relu", args[0]->tensor, args[2]->tensor, [slope](auto x) {
    using T = decltype(x);
    return x > T(0) ? x : x * static_cast<T>(slope);
  });
}

}  // namespace pocket
