// aten::squeeze(Tensor(a) self) -> Tensor(a)
// aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
// aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

// Copies self without the dims marked in `drop` that have size 1.
static Error squeeze_marked(KernelContext& ctx, const Tensor& self, const bool* drop, Tensor& out) {
  int64_t sizes[kMaxDim];
  int n = 0;
  for (int d = 0; d < self.dim; ++d)
    if (!drop[d] || self.sizes[d] != 1) sizes[n++] = self.sizes[d];
  return detail::copy_to_output(ctx, "squeeze", self, out, sizes, n);
}

Error op_squeeze(KernelContext& ctx, Value** args) {
  bool drop[kMaxDim];
  for (bool& b : drop) b = true;
  return squeeze_marked(ctx, args[0]->tensor, drop, args[1]->tensor);
}

Error op_squeeze_dim(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  bool drop[kMaxDim] = {};
  int d = 0;
  Error e = detail::normalize_dim(ctx, "squeeze", args[1]->i, self.dim, &d);
  if (e != Error::Ok) return e;
  drop[d] = true;
  return squeeze_marked(ctx, self, drop, args[2]->tensor);
}

Error op_squeeze_dims(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const IntList& dims = args[1]->int_list;
  bool drop[kMaxDim] = {};
  for (size_t i = 0; i < dims.size; ++i) {
    int d = 0;
    Error e = detail::normalize_dim(ctx, "squeeze", dims[i], self.dim, &d);
    if (e != Error::Ok) return e;
    drop[d] = true;
  }
  return squeeze_marked(ctx, self, drop, args[2]->tensor);
}

}  // namespace pocket
