// aten::rsqrt(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// 1 / sqrt(x); integer inputs give a float output, as in torch.
Error op_rsqrt(KernelContext& ctx, Value** args) {
  return detail::unary_to_float(ctx, "rsqrt", args, [](auto x) {
    using T = decltype(x);
    return T(1) / std::sqrt(x);
  });
}

}  // namespace pocket
