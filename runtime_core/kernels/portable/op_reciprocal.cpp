// aten::reciprocal(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// 1 / x; integer inputs give a float output, as in torch.
Error op_reciprocal(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "reciprocal", args, [](auto x) {
    using T = decltype(x);
    return T(1) / x;
  });
}

}  // namespace pocket
