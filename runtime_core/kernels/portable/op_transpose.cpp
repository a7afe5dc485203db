// aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

Error op_transpose_int(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  int d0 = 0, d1 = 0;
  Error e = detail::normalize_dim(ctx, "transpose", args[1]->i, self.dim, &d0);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, "transpose", args[2]->i, self.dim, &d1);
  if (e != Error::Ok) return e;
  Tensor view = self;
  if (self.dim > 0) {
    view.sizes[d0] = self.sizes[d1];
    view.sizes[d1] = self.sizes[d0];
    view.strides[d0] = self.strides[d1];
    view.strides[d1] = self.strides[d0];
  }
  return detail::copy_to_output(ctx, "transpose", view, args[3]->tensor, view.sizes, view.dim);
}

}  // namespace pocket
