// aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
#include "shape_util.h"

namespace pocket {

// Outputs are always contiguous, so memory_format changes nothing about the values.
Error op_clone(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  return detail::copy_to_output(ctx, "clone", self, args[2]->tensor, self.sizes, self.dim);
}

}  // namespace pocket
