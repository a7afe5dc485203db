// aten::bitwise_not(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// ~x for integers, logical not for bool.
Error op_bitwise_not(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Integral>(ctx, "bitwise_not", out.dtype, args[0]->tensor,
                                                   out, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same<T, bool>::value) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  });
}

}  // namespace pocket
