// aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_adaptive_avg_pool1d(KernelContext& ctx, Value** args) {
  // self (C, L) or (N, C, L)
  return detail::adaptive_avg_pool_op(ctx, "adaptive_avg_pool1d", args[0]->tensor, 1, args[1]->int_list, args[2]->tensor);
}

}  // namespace pocket
