// aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

Error op_select_int(KernelContext& ctx, Value** args) {
  Tensor view;
  Error e = detail::select_view(ctx, "select", args[0]->tensor, args[1]->i, args[2]->i, &view);
  if (e != Error::Ok) return e;
  return detail::copy_to_output(ctx, "select", view, args[3]->tensor, view.sizes, view.dim);
}

}  // namespace pocket
