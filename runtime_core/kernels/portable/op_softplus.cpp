// aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// log(1 + exp(beta * x)) / beta, or x where beta * x > threshold; float dtypes only.
Error op_softplus(KernelContext& ctx, Value** args) {
  double beta = args[1]->to_double();
  double threshold = args[2]->to_double();
  return detail::unary_float(ctx, "softplus", args[0]->tensor, args[3]->tensor, [&](auto x) {
    using T = decltype(x);
    T bx = x * static_cast<T>(beta);
    if (bx > static_cast<T>(threshold)) return x;
    return std::log1p(std::exp(bx)) / static_cast<T>(beta);
  });
}

}  // namespace pocket
