// aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
#include "util.h"

namespace pocket {

Error op_add_tensor(KernelContext& ctx, Value** args) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  double alpha = args[2]->to_double();
  Tensor& out = args[3]->tensor;
  if (alpha == 1.0)
    return detail::binary_elementwise(ctx, "add", a, b, out, [](auto x, auto y) { return x + y; });
  return detail::binary_elementwise(ctx, "add", a, b, out,
                                    [alpha](auto x, auto y) { return x + alpha * y; });
}

}  // namespace pocket
