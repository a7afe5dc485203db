// aten::sym_size.int(Tensor self, int dim) -> SymInt
#include "shape_util.h"

namespace pocket {

Error op_sym_size_int(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  int d = 0;
  Error e = detail::expect_not_scalar(ctx, "sym_size", self);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, "sym_size", args[1]->i, self.dim, &d);
  if (e != Error::Ok) return e;
  args[2]->i = self.sizes[d];
  return Error::Ok;
}

}  // namespace pocket
