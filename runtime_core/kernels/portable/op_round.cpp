// aten::round(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Rounds to the nearest integer, halves to even (nearbyint in the default rounding mode);
// integer tensors are copied unchanged, as in torch.
Error op_round(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "round", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::nearbyint(x);
    } else {
      return x;
    }
  });
}

}  // namespace pocket
