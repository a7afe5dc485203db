// aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// clamp(x, min_val, max_val) in the output's dtype; NaN propagates, bool is rejected.
Error op_hardtanh(KernelContext& ctx, Value** args) {
  const Value& lo = *args[1];
  const Value& hi = *args[2];
  Tensor& out = args[3]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "hardtanh", out.dtype, args[0]->tensor, out,
                                                  [&](auto x) {
    using T = decltype(x);
    return detail::min_nan(detail::max_nan(x, detail::scalar_as<T>(lo)), detail::scalar_as<T>(hi));
  });
}

}  // namespace pocket
