// aten::expm1(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_expm1(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "expm1", args, [](auto x) { return std::expm1(x); });
}

}  // namespace pocket
