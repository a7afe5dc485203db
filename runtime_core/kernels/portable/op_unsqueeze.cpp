// aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

Error op_unsqueeze(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  if (self.dim >= kMaxDim)
    return ctx.fail(Error::Unsupported, "unsqueeze: a %d-d tensor cannot gain a dim (at most %d)",
                    self.dim, kMaxDim);
  int d = 0;
  Error e = detail::normalize_dim(ctx, "unsqueeze", args[1]->i, self.dim + 1, &d);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  for (int k = 0, s = 0; k <= self.dim; ++k) sizes[k] = k == d ? 1 : self.sizes[s++];
  return detail::copy_to_output(ctx, "unsqueeze", self, args[2]->tensor, sizes, self.dim + 1);
}

}  // namespace pocket
