// aten::sign(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {

// -1, 0 or 1 in the output's dtype (NaN gives 0, bool stays as it is, as in torch).
Error op_sign(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::All>(ctx, "sign", out.dtype, args[0]->tensor, out,
                                              [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_signed<T>::value) {  // floating types are signed too
      return static_cast<T>((T(0) < x) - (x < T(0)));
    } else {
      return static_cast<T>(x != 0);
    }
  });
}

}  // namespace pocket
