// aten::acos(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_acos(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "acos", args, [](auto x) { return std::acos(x); });
}

}  // namespace pocket
