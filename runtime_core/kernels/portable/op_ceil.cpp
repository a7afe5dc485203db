// aten::ceil(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Rounds toward positive infinity; integer tensors are copied unchanged, as in torch.
Error op_ceil(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "ceil", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::ceil(x);
    } else {
      return x;
    }
  });
}

}  // namespace pocket
