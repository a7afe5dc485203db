// aten::silu(Tensor self) -> Tensor
#include "elementwise_util.h"
#include "parts.h"

namespace pocket {

// x * sigmoid(x); float dtypes only, as in torch.
Error op_silu(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "silu", args[0]->tensor, args[1]->tensor, [](auto x) { return detail::silu_of(x); });
}

}  // namespace pocket
