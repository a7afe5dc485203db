// aten::flip(Tensor self, int[] dims) -> Tensor
#include "shape_util.h"

namespace pocket {

// Reads each flipped dim backwards: a view starting at its last element, negative stride.
Error op_flip(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const IntList& dims = args[1]->int_list;
  Tensor view = self;
  bool seen[kMaxDim] = {};
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size; ++i) {
    int d = 0;
    Error e = detail::normalize_dim(ctx, "flip", dims[i], self.dim, &d);
    if (e != Error::Ok) return e;
    if (seen[d]) return ctx.fail(Error::InvalidArgument, "flip: dim %d appears more than once", d);
    seen[d] = true;
    if (self.dim == 0 || self.sizes[d] == 0) continue;
    offset += (self.sizes[d] - 1) * self.strides[d];
    view.strides[d] = -self.strides[d];
  }
  if (self.numel() > 0) view.data = detail::element_ptr(self, offset);
  return detail::copy_to_output(ctx, "flip", view, args[2]->tensor, view.sizes, view.dim);
}

}  // namespace pocket
