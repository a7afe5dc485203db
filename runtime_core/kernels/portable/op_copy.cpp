// aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
#include "shape_util.h"

namespace pocket {

// The functional form of self.copy_(src): src broadcast to self's shape, in self's dtype.
Error op_copy(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const Tensor& src = args[1]->tensor;
  Tensor& out = args[3]->tensor;
  Tensor view;
  Error e = detail::expect_same_dtype(ctx, "copy", self, out);
  if (e == Error::Ok)
    e = detail::broadcast_view(ctx, "copy", "src", src, self.sizes, self.dim, &view);
  if (e == Error::Ok) e = detail::resize_output(ctx, "copy", out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  detail::convert_elements(out, view);
  return Error::Ok;
}

}  // namespace pocket
