// aten::logical_xor(Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// True where exactly one is nonzero; inputs of any dtype, bool output.
Error op_logical_xor(KernelContext& ctx, Value** args) {
  return detail::logical_binary(ctx, "logical_xor", args, [](bool x, bool y) { return x != y; });
}

}  // namespace pocket
