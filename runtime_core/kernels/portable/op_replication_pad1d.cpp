// aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor
#include "pad_util.h"

namespace pocket {

Error op_replication_pad1d(KernelContext& ctx, Value** args) {
  return detail::pad_nd(ctx, "replication_pad1d", args[0]->tensor, args[1]->int_list, 1, detail::PadMode::Replicate,
                        args[2]->tensor);
}

}  // namespace pocket
