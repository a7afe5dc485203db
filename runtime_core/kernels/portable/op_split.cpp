// aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
#include "shape_util.h"

namespace pocket {

// Chunks of split_size along dim; the last one may be shorter.
Error op_split_tensor(KernelContext& ctx, Value** args) {
  const char* op = "split";
  const Tensor& self = args[0]->tensor;
  int64_t split = args[1]->i;
  const TensorList& outs = args[3]->tensor_list;
  int d = 0;
  Error e = detail::expect_not_scalar(ctx, op, self);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, args[2]->i, self.dim, &d);
  if (e != Error::Ok) return e;
  int64_t size = self.sizes[d];
  if (split < 0 || (split == 0 && size > 0))
    return ctx.fail(Error::InvalidArgument,
                    "%s: split size %lld is invalid for dim %d of size %lld", op,
                    static_cast<long long>(split), d, static_cast<long long>(size));
  int64_t chunks = size == 0 ? 1 : (size - 1) / split + 1;
  if (static_cast<int64_t>(outs.size) != chunks)
    return ctx.fail(Error::InvalidArgument, "%s: %lld chunks but %zu outputs", op,
                    static_cast<long long>(chunks), outs.size);
  for (int64_t k = 0; k < chunks; ++k) {
    int64_t start = k * split;
    Tensor view = self;
    view.sizes[d] = size - start < split ? size - start : split;
    view.data = detail::element_ptr(self, start * self.strides[d]);
    e = detail::copy_to_output(ctx, op, view, *outs[static_cast<size_t>(k)], view.sizes, view.dim);
    if (e != Error::Ok) return e;
  }
  return Error::Ok;
}

}  // namespace pocket
