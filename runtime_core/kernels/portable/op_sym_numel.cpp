// aten::sym_numel(Tensor self) -> SymInt
#include "util.h"

namespace pocket {

Error op_sym_numel(KernelContext& ctx, Value** args) {
  args[1]->i = args[0]->tensor.numel();
  return Error::Ok;
}

}  // namespace pocket
