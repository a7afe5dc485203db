// aten::t(Tensor(a) self) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

// Transposes a 2-d tensor; 0-d and 1-d tensors are copied as they are.
Error op_t(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  if (self.dim > 2)
    return ctx.fail(Error::InvalidArgument, "t: expected a tensor with at most 2 dims, got %d",
                    self.dim);
  Tensor view = self;
  if (self.dim == 2) {
    view.sizes[0] = self.sizes[1];
    view.sizes[1] = self.sizes[0];
    view.strides[0] = self.strides[1];
    view.strides[1] = self.strides[0];
  }
  return detail::copy_to_output(ctx, "t", view, args[1]->tensor, view.sizes, view.dim);
}

}  // namespace pocket
