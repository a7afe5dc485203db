// aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_avg_pool1d(KernelContext& ctx, Value** args) {
  // self (C, L) or (N, C, L)
  return detail::avg_pool_op(ctx, "avg_pool1d", args[0]->tensor, 1, args[1]->int_list, args[2]->int_list,
                             args[3]->int_list, args[4]->b, args[5]->b, 0, args[6]->tensor);
}

}  // namespace pocket
