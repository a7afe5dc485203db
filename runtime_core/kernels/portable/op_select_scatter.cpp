// aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor
#include "shape_util.h"

namespace pocket {

// out = self with out.select(dim, index) = src.
Error op_select_scatter(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const Tensor& src = args[1]->tensor;
  Tensor& out = args[4]->tensor;
  Error e = detail::expect_same_dtype(ctx, "select_scatter", src, out);
  if (e == Error::Ok)
    e = detail::copy_to_output(ctx, "select_scatter", self, out, self.sizes, self.dim);
  Tensor view;
  if (e == Error::Ok)
    e = detail::select_view(ctx, "select_scatter", out, args[2]->i, args[3]->i, &view);
  if (e != Error::Ok) return e;
  return detail::copy_into_view(ctx, "select_scatter", view, src);
}

}  // namespace pocket
