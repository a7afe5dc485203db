// aten::log(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch; log of a negative number is NaN.
Error op_log(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "log", args, [](auto x) { return std::log(x); });
}

}  // namespace pocket
