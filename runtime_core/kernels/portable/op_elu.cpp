// aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// scale * x for x > 0, else alpha * scale * (exp(x * input_scale) - 1); float dtypes only.
Error op_elu(KernelContext& ctx, Value** args) {
  double alpha = args[1]->to_double();
  double scale = args[2]->to_double();
  double input_scale = args[3]->to_double();
  return detail::unary_float(ctx, "elu", args[0]->tensor, args[4]->tensor, [&](auto x) {
    using T = decltype(x);
    if (x > T(0)) return x * static_cast<T>(scale);
    return std::expm1(x * static_cast<T>(input_scale)) * static_cast<T>(alpha * scale);
  });
}

}  // namespace pocket
