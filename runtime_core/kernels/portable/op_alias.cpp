// aten::alias(Tensor(a) self) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

Error op_alias(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  return detail::copy_to_output(ctx, "alias", self, args[1]->tensor, self.sizes, self.dim);
}

}  // namespace pocket
