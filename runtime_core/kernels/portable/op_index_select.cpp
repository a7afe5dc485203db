// aten::index_select(Tensor self, int dim, Tensor index) -> Tensor
#include "index_util.h"
#include "shape_util.h"

namespace pocket {

// out[..., k, ...] = self[..., index[k], ...] along dim; index is 0-d or 1-d.
Error op_index_select(KernelContext& ctx, Value** args) {
  const char* op = "index_select";
  const Tensor& self = args[0]->tensor;
  const Tensor& index = args[2]->tensor;
  Tensor& out = args[3]->tensor;
  int d = 0;
  Error e = detail::expect_index_tensor(ctx, op, index);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, args[1]->i, self.dim, &d);
  if (e == Error::Ok && index.dim > 1)
    e = ctx.fail(Error::InvalidArgument, "%s: index must be 0-d or 1-d, got %d dims", op,
                 index.dim);
  if (e == Error::Ok) e = detail::expect_same_dtype(ctx, op, self, out);
  if (e != Error::Ok) return e;
  // A 0-d self behaves as a 1-d tensor of one element, and the result stays 0-d.
  int64_t dim_size = self.dim > 0 ? self.sizes[d] : 1;
  int64_t dim_stride = self.dim > 0 ? self.strides[d] : 0;
  int64_t n = index.numel();
  int64_t istride = index.dim > 0 ? index.strides[0] : 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t v = 0;
    e = detail::wrap_index(ctx, op, detail::load_index(index, k * istride), d, dim_size, &v,
                              false);
    if (e != Error::Ok) return e;
  }
  int64_t sizes[kMaxDim];
  for (int i = 0; i < self.dim; ++i) sizes[i] = i == d ? n : self.sizes[i];
  if (self.dim == 0 && n != 1)
    return ctx.fail(Error::InvalidArgument, "%s: a 0-d input takes exactly one index, got %lld", op,
                    static_cast<long long>(n));
  e = detail::resize_output(ctx, op, out, sizes, self.dim);
  if (e != Error::Ok) return e;
  // outer dims (before d) x index x inner dims (after d), the inner block copied whole.
  int inner_dim = self.dim > 0 ? self.dim - d - 1 : 0;
  const int64_t* inner_sizes = self.sizes + d + 1;
  const int64_t* inner_strides = self.strides + d + 1;
  int64_t inner = 1;
  for (int i = 0; i < inner_dim; ++i) inner *= inner_sizes[i];
  int64_t outer_strides[1][kMaxDim];
  for (int i = 0; i < d; ++i) outer_strides[0][i] = self.strides[i];
  int64_t pos = 0;
  detail::for_each_offset<1>(self.sizes, d, outer_strides, [&](const int64_t* o) {
    for (int64_t k = 0; k < n; ++k) {
      int64_t v = detail::load_index(index, k * istride);
      Tensor src = detail::make_view(self, o[0] + v * dim_stride, inner_sizes, inner_strides,
                                     inner_dim);
      detail::copy_elements(detail::make_view(out, pos, inner_sizes, nullptr, inner_dim), src);
      pos += inner;
    }
  });
  return Error::Ok;
}

}  // namespace pocket
