// aten::tan(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_tan(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "tan", args, [](auto x) { return std::tan(x); });
}

}  // namespace pocket
