// aten::logical_and(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// True where both are nonzero; inputs of any dtype, bool output.
Error op_logical_and(KernelContext& ctx, Value** args) {
  return detail::logical_binary(ctx, "logical_and", args, [](bool x, bool y) { return x && y; });
}

}  // namespace pocket
