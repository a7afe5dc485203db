// aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)
//
// A view of self's storage with the given sizes, strides and offset, copied out. Pocket's
// storage of self is self's own elements in row-major order (values in a program are not views
// of larger buffers), and every element the view reaches must lie inside it.
#include "shape_util.h"

namespace pocket {

Error op_as_strided(KernelContext& ctx, Value** args) {
  const char* op = "as_strided";
  const Tensor& self = args[0]->tensor;
  const IntList& strides = args[2]->int_list;
  const int64_t offset = args[3]->is_none() ? 0 : args[3]->i;
  Tensor& out = args[4]->tensor;
  int64_t sizes[kMaxDim], view_strides[kMaxDim];
  int dim = 0;
  Error e = detail::expect_same_dtype(ctx, op, self, out);
  if (e == Error::Ok) e = detail::read_sizes(ctx, op, args[1]->int_list, sizes, &dim);
  if (e != Error::Ok) return e;
  if (strides.size != static_cast<size_t>(dim))
    return ctx.fail(Error::InvalidArgument, "%s: stride has %zu items, size has %d", op, strides.size, dim);
  if (offset < 0)
    return ctx.fail(Error::InvalidArgument, "%s: storage_offset is %lld, expected >= 0", op,
                    static_cast<long long>(offset));
  int64_t last = offset, count = 1;  // the furthest element reached
  for (int d = 0; d < dim; ++d) {
    view_strides[d] = strides[static_cast<size_t>(d)];
    if (view_strides[d] < 0 || view_strides[d] > (int64_t(1) << 40))
      return ctx.fail(Error::InvalidArgument, "%s: stride[%d] is %lld, expected 0 to 2^40", op, d,
                      static_cast<long long>(view_strides[d]));
    last += (sizes[d] - 1) * view_strides[d];
    count *= sizes[d];
  }
  if (count > 0 && last >= self.numel()) {
    char buf[128];
    return ctx.fail(Error::OutOfRange, "%s: the view reaches element %lld of an input of %lld elements (shape %s)",
                    op, static_cast<long long>(last), static_cast<long long>(self.numel()),
                    shape_string(self.sizes, self.dim, buf, sizeof buf));
  }
  Tensor storage = self;
  if (!self.is_contiguous()) {  // a row-major copy of self in temp memory
    const size_t bytes = static_cast<size_t>(self.numel()) * element_size(self.dtype);
    void* copy = ctx.allocate_temp(bytes > 0 ? bytes : 1);
    if (copy == nullptr)
      return ctx.fail(Error::OutOfMemory, "%s: no temp memory for a contiguous copy (%zu bytes)", op, bytes);
    storage.data = copy;
    storage.set_contiguous_strides();
    detail::copy_elements(storage, self);
  }
  Tensor view = detail::make_view(storage, count > 0 ? offset : 0, sizes, view_strides, dim);
  return detail::copy_to_output(ctx, op, view, out, sizes, dim);
}

}  // namespace pocket
