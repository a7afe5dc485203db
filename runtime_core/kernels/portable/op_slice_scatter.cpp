// aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
#include "shape_util.h"

namespace pocket {

// out = self with out[dim, start:end:step] = src.
Error op_slice_scatter(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const Tensor& src = args[1]->tensor;
  Tensor& out = args[6]->tensor;
  Error e = detail::expect_same_dtype(ctx, "slice_scatter", src, out);
  if (e == Error::Ok)
    e = detail::copy_to_output(ctx, "slice_scatter", self, out, self.sizes, self.dim);
  Tensor view;
  if (e == Error::Ok)
    e = detail::slice_view(ctx, "slice_scatter", out, args[2]->i, *args[3], *args[4], args[5]->i,
                           &view);
  if (e != Error::Ok) return e;
  return detail::copy_into_view(ctx, "slice_scatter", view, src);
}

}  // namespace pocket
