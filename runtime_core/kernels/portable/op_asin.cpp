// aten::asin(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_asin(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "asin", args, [](auto x) { return std::asin(x); });
}

}  // namespace pocket
