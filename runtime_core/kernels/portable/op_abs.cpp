// aten::abs(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// |x| in the output's dtype; the most negative integer stays negative, as in torch.
Error op_abs(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Numeric>(ctx, "abs", out.dtype, args[0]->tensor, out,
                                                  [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point<T>::value) {
      return std::abs(x);
    } else if constexpr (std::is_signed<T>::value) {
      return x < 0 ? detail::negate(x) : x;
    } else {
      return x;
    }
  });
}

}  // namespace pocket
