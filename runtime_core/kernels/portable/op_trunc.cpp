// aten::trunc(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Rounds toward zero; integer tensors are copied unchanged, as in torch.
Error op_trunc(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "trunc", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::trunc(x);
    } else {
      return x;
    }
  });
}

}  // namespace pocket
