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
  bool same = src.dim == view.dim;
  for (int d = 0; same && d < src.dim; ++d) same = src.sizes[d] == view.sizes[d];
  if (!same) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument, "slice_scatter: src has shape %s, expected %s",
                    shape_string(src.sizes, src.dim, a, sizeof a),
                    shape_string(view.sizes, view.dim, b, sizeof b));
  }
  detail::copy_elements(view, src);
  return Error::Ok;
}

}  // namespace pocket
