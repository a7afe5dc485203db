// aten::logical_or(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// True where either is nonzero; inputs of any dtype, bool output.
Error op_logical_or(KernelContext& ctx, Value** args) {
  return detail::logical_binary(ctx, "logical_or", args, [](bool x, bool y) { return x || y; });
}

}  // namespace pocket
