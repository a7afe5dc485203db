// aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

// Copies self, read in row-major order, into the output with the new shape.
Error op_view(KernelContext& ctx, Value** args) {
  return detail::view_to_output(ctx, "view", args[0]->tensor, args[1]->int_list, args[2]->tensor);
}

}  // namespace pocket
