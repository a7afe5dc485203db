// aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

Error op_permute(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const IntList& dims = args[1]->int_list;
  Tensor& out = args[2]->tensor;
  if (dims.size != static_cast<size_t>(self.dim))
    return ctx.fail(Error::InvalidArgument, "permute: %zu dims given for a %d-d tensor", dims.size,
                    self.dim);
  Tensor view = self;
  bool seen[kMaxDim] = {};
  for (int i = 0; i < self.dim; ++i) {
    int d = 0;
    Error e = detail::normalize_dim(ctx, "permute", dims[i], self.dim, &d);
    if (e != Error::Ok) return e;
    if (seen[d]) return ctx.fail(Error::InvalidArgument, "permute: dim %d is repeated", d);
    seen[d] = true;
    view.sizes[i] = self.sizes[d];
    view.strides[i] = self.strides[d];
  }
  return detail::copy_to_output(ctx, "permute", view, out, view.sizes, view.dim);
}

}  // namespace pocket
