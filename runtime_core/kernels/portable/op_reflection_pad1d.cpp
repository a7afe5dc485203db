// aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
#include "pad_util.h"

namespace pocket {

Error op_reflection_pad1d(KernelContext& ctx, Value** args) {
  return detail::pad_nd(ctx, "reflection_pad1d", args[0]->tensor, args[1]->int_list, 1, detail::PadMode::Reflect,
                        args[2]->tensor);
}

}  // namespace pocket
