// aten::log1p(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// log(1 + x), accurate for small x; integer inputs give a float output.
Error op_log1p(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "log1p", args, [](auto x) { return std::log1p(x); });
}

}  // namespace pocket
