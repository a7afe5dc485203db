// aten::sqrt(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch; sqrt of a negative number is NaN.
Error op_sqrt(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "sqrt", args, [](auto x) { return std::sqrt(x); });
}

}  // namespace pocket
