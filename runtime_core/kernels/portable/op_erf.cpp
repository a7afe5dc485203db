// aten::erf(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_erf(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "erf", args, [](auto x) { return std::erf(x); });
}

}  // namespace pocket
