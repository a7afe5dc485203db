// aten::replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor
#include "pad_util.h"

namespace pocket {

Error op_replication_pad3d(KernelContext& ctx, Value** args) {
  return detail::pad_nd(ctx, "replication_pad3d", args[0]->tensor, args[1]->int_list, 3, detail::PadMode::Replicate,
                        args[2]->tensor);
}

}  // namespace pocket
