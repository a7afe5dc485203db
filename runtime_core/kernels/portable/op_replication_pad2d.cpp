// aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor
#include "pad_util.h"

namespace pocket {

Error op_replication_pad2d(KernelContext& ctx, Value** args) {
  return detail::pad_nd(ctx, "replication_pad2d", args[0]->tensor, args[1]->int_list, 2, detail::PadMode::Replicate,
                        args[2]->tensor);
}

}  // namespace pocket
