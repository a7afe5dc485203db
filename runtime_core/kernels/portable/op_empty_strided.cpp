// aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
#include "shape_util.h"

namespace pocket {

// Pocket's planned tensors are contiguous, so the strides only need to be valid: the values
// do not depend on the layout. The contents are zeroed, as empty's, so runs repeat exactly.
Error op_empty_strided(KernelContext& ctx, Value** args) {
  const char* op = "empty_strided";
  const IntList& strides = args[1]->int_list;
  Tensor& out = args[6]->tensor;
  int64_t sizes[kMaxDim];
  int dim = 0;
  Error e = detail::check_dtype_arg(ctx, op, *args[2], nullptr, out);
  if (e == Error::Ok) e = detail::read_sizes(ctx, op, args[0]->int_list, sizes, &dim);
  if (e != Error::Ok) return e;
  if (strides.size != static_cast<size_t>(dim))
    return ctx.fail(Error::InvalidArgument, "%s: stride has %zu items, size has %d", op, strides.size, dim);
  for (int d = 0; d < dim; ++d)
    if (strides[static_cast<size_t>(d)] < 0)
      return ctx.fail(Error::InvalidArgument, "%s: stride[%d] is %lld, expected >= 0", op, d,
                      static_cast<long long>(strides[static_cast<size_t>(d)]));
  e = detail::resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  std::memset(out.data, 0, out.nbytes());
  return Error::Ok;
}

}  // namespace pocket
