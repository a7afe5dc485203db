// aten::hardswish(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// x * relu6(x + 3) / 6; float dtypes only, as in torch.
Error op_hardswish(KernelContext& ctx, Value** args) {
  return detail::unary_float(ctx, "hardswish", args[0]->tensor, args[1]->tensor, [](auto x) {
    using T = decltype(x);
    T r = x + T(3);
    r = r < T(0) ? T(0) : (r > T(6) ? T(6) : r);
    return x * r / T(6);
  });
}

}  // namespace pocket
