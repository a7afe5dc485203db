// aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor
#include "shape_util.h"

namespace pocket {

Error op_unsafe_view(KernelContext& ctx, Value** args) {
  return detail::view_to_output(ctx, "_unsafe_view", args[0]->tensor, args[1]->int_list,
                                args[2]->tensor);
}

}  // namespace pocket
