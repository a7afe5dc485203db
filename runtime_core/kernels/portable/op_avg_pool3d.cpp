// aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_avg_pool3d(KernelContext& ctx, Value** args) {
  // self (C, D, H, W) or (N, C, D, H, W)
  const char* op = "avg_pool3d";
  if (!args[6]->is_none() && args[6]->i == 0)
    return ctx.fail(Error::InvalidArgument, "%s: divisor_override must be non-zero", op);
  return detail::avg_pool_op(ctx, op, args[0]->tensor, 3, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                             args[4]->b, args[5]->b, args[6]->is_none() ? 0 : args[6]->i, args[7]->tensor);
}

}  // namespace pocket
