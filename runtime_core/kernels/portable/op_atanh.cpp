// aten::atanh(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_atanh(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "atanh", args, [](auto x) { return std::atanh(x); });
}

}  // namespace pocket
