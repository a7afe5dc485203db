// aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
#include "shape_util.h"

namespace pocket {

// Output k is self[dim, start_k : start_k + split_sizes[k]], copied.
Error op_split_with_sizes(KernelContext& ctx, Value** args) {
  const char* op = "split_with_sizes";
  const Tensor& self = args[0]->tensor;
  const IntList& split = args[1]->int_list;
  const TensorList& outs = args[3]->tensor_list;
  int d = 0;
  Error e = detail::expect_not_scalar(ctx, op, self);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, args[2]->i, self.dim, &d);
  if (e != Error::Ok) return e;
  if (split.size != outs.size)
    return ctx.fail(Error::InvalidArgument, "%s: %zu split sizes but %zu outputs", op, split.size,
                    outs.size);
  int64_t total = 0;
  for (size_t k = 0; k < split.size; ++k) {
    if (split[k] < 0 || __builtin_add_overflow(total, split[k], &total))
      return ctx.fail(Error::InvalidArgument, "%s: invalid split size %lld", op,
                      static_cast<long long>(split[k]));
  }
  if (total != self.sizes[d])
    return ctx.fail(Error::InvalidArgument, "%s: split sizes sum to %lld but dim %d has size %lld",
                    op, static_cast<long long>(total), d, static_cast<long long>(self.sizes[d]));
  int64_t start = 0;
  for (size_t k = 0; k < split.size; ++k) {
    Tensor view = self;
    view.sizes[d] = split[k];
    view.data = detail::element_ptr(self, start * self.strides[d]);
    e = detail::copy_to_output(ctx, op, view, *outs[k], view.sizes, view.dim);
    if (e != Error::Ok) return e;
    start += split[k];
  }
  return Error::Ok;
}

}  // namespace pocket
