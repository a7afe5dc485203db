// aten::log2(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// Integer inputs give a float output, as in torch.
Error op_log2(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "log2", args, [](auto x) { return std::log2(x); });
}

}  // namespace pocket
