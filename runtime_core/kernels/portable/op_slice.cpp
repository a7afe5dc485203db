// aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

// start/end are clamped like Python slices; end is often INT64_MAX ("to the end").
Error op_slice_tensor(KernelContext& ctx, Value** args) {
  Tensor view;
  Error e = detail::slice_view(ctx, "slice", args[0]->tensor, args[1]->i, *args[2], *args[3],
                               args[4]->i, &view);
  if (e != Error::Ok) return e;
  return detail::copy_to_output(ctx, "slice", view, args[5]->tensor, view.sizes, view.dim);
}

}  // namespace pocket
