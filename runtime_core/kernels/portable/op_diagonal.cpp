// aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
//
// The elements self[..., i, ..., i + offset, ...] (dims dim1, dim2; offset < 0 moves below the
// main diagonal), with dim1 and dim2 removed and the diagonal appended as the last dim.
#include <algorithm>

#include "shape_util.h"

namespace pocket {

Error op_diagonal(KernelContext& ctx, Value** args) {
  const char* op = "diagonal";
  const Tensor& self = args[0]->tensor;
  const int64_t offset = args[1]->i;
  int d1 = 0, d2 = 0;
  if (self.dim < 2)
    return ctx.fail(Error::InvalidArgument, "%s: input has %d dims, expected at least 2", op, self.dim);
  Error e = detail::normalize_dim(ctx, op, args[2]->i, self.dim, &d1);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, args[3]->i, self.dim, &d2);
  if (e != Error::Ok) return e;
  if (d1 == d2)
    return ctx.fail(Error::InvalidArgument, "%s: dim1 and dim2 are both %d, expected two different dims", op, d1);
  // Diagonal length; an offset past either edge gives an empty diagonal.
  int64_t len = 0;
  if (offset >= 0 && offset < self.sizes[d2])
    len = std::min(self.sizes[d1], self.sizes[d2] - offset);
  else if (offset < 0 && -offset < self.sizes[d1])
    len = std::min(self.sizes[d1] + offset, self.sizes[d2]);
  int64_t start = 0;
  if (len > 0) start = offset >= 0 ? offset * self.strides[d2] : -offset * self.strides[d1];
  int64_t sizes[kMaxDim], strides[kMaxDim];
  int n = 0;
  for (int d = 0; d < self.dim; ++d)
    if (d != d1 && d != d2) {
      sizes[n] = self.sizes[d];
      strides[n++] = self.strides[d];
    }
  sizes[n] = len;
  strides[n++] = self.strides[d1] + self.strides[d2];
  Tensor view = detail::make_view(self, start, sizes, strides, n);
  return detail::copy_to_output(ctx, op, view, args[4]->tensor, sizes, n);
}

}  // namespace pocket
