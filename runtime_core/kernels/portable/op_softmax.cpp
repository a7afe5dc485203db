// aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
#include "softmax_util.h"

namespace pocket {

Error op_softmax(KernelContext& ctx, Value** args) {
  return detail::softmax_into(ctx, "_softmax", args[0]->tensor, args[1]->i, args[2]->b,
                              args[3]->tensor, /*log=*/false);
}

}  // namespace pocket
