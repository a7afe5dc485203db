// aten::log10(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_log10(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "log10", args, [](auto x) { return std::log10(x); });
}

}  // namespace pocket
