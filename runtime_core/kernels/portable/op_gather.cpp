// aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
#include "index_util.h"
#include "shape_util.h"

namespace pocket {

// out[i][j][k] = self[index[i][j][k]][j][k] for dim 0 (likewise for other dims).
Error op_gather(KernelContext& ctx, Value** args) {
  const char* op = "gather";
  const Tensor& self = args[0]->tensor;
  const Tensor& index = args[2]->tensor;
  Tensor& out = args[4]->tensor;
  int d = 0;
  Error e = detail::expect_index_tensor(ctx, op, index);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, args[1]->i, self.dim, &d);
  if (e == Error::Ok) e = detail::expect_same_dtype(ctx, op, self, out);
  if (e != Error::Ok) return e;
  bool ok = index.dim == self.dim;
  for (int i = 0; ok && i < self.dim; ++i) ok = i == d || index.sizes[i] <= self.sizes[i];
  if (!ok) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument,
                    "%s: index of shape %s does not fit self of shape %s at dim %d", op,
                    shape_string(index.sizes, index.dim, a, sizeof a),
                    shape_string(self.sizes, self.dim, b, sizeof b), d);
  }
  e = detail::resize_output(ctx, op, out, index.sizes, index.dim);
  if (e != Error::Ok) return e;
  int64_t dim_size = self.dim > 0 ? self.sizes[d] : 1;
  int64_t dim_stride = self.dim > 0 ? self.strides[d] : 0;
  int64_t strides[2][kMaxDim];
  for (int i = 0; i < self.dim; ++i) {
    strides[0][i] = index.strides[i];
    strides[1][i] = i == d ? 0 : self.strides[i];
  }
  size_t es = element_size(self.dtype);
  char* dst = static_cast<char*>(out.data);
  int64_t pos = 0;
  detail::for_each_offset<2>(index.sizes, index.dim, strides, [&](const int64_t* o) {
    if (e != Error::Ok) return;
    int64_t v = 0;
    e = detail::wrap_index(ctx, op, detail::load_index(index, o[0]), d, dim_size, &v, false);
    if (e != Error::Ok) return;
    detail::copy_element(dst + pos++ * static_cast<int64_t>(es),
                         detail::element_ptr(self, o[1] + v * dim_stride), es);
  });
  return e;
}

}  // namespace pocket
