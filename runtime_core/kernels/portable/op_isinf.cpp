// aten::isinf(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// Bool output; integer and bool tensors hold no infinities.
Error op_isinf(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  return detail::unary_predicate<detail::Kinds::All>(ctx, "isinf", in.dtype, in, args[1]->tensor,
                                                     [](auto x) {
    if constexpr (std::is_floating_point<decltype(x)>::value) {
      return std::isinf(x);
    } else {
      return false;
    }
  });
}

}  // namespace pocket
