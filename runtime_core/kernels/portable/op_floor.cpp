// aten::floor(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Rounds toward negative infinity; integer tensors are copied unchanged, as in torch.
Error op_floor(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "floor", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::floor(x);
    } else {
      return x;
    }
  });
}

}  // namespace pocket
