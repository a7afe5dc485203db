// aten::_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_adaptive_avg_pool3d(KernelContext& ctx, Value** args) {
  // self (C, D, H, W) or (N, C, D, H, W)
  return detail::adaptive_avg_pool_op(ctx, "_adaptive_avg_pool3d", args[0]->tensor, 3, args[1]->int_list, args[2]->tensor);
}

}  // namespace pocket
