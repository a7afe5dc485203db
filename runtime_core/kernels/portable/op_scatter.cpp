// aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
// aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
#include "shape_util.h"

namespace pocket {

// out = self, then out[index[i][j]][j] = src[i][j] for dim 0 (likewise for other dims).
// `src` is null for scatter.value, which writes `element` everywhere instead.
static Error scatter(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                     const Tensor& index, const Tensor* src, const void* element, Tensor& out) {
  int d = 0;
  Error e = detail::expect_index_tensor(ctx, op, index);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, op, dim, self.dim, &d);
  if (e == Error::Ok && src != nullptr) e = detail::expect_same_dtype(ctx, op, *src, out);
  if (e != Error::Ok) return e;
  bool ok = index.dim == self.dim && (src == nullptr || src->dim == self.dim);
  for (int i = 0; ok && i < self.dim; ++i)
    ok = (i == d || index.sizes[i] <= self.sizes[i]) &&
         (src == nullptr || index.sizes[i] <= src->sizes[i]);
  if (!ok) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument,
                    "%s: index of shape %s does not fit self of shape %s at dim %d", op,
                    shape_string(index.sizes, index.dim, a, sizeof a),
                    shape_string(self.sizes, self.dim, b, sizeof b), d);
  }
  e = detail::copy_to_output(ctx, op, self, out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  int64_t dim_size = self.dim > 0 ? self.sizes[d] : 1;
  int64_t dim_stride = self.dim > 0 ? out.strides[d] : 0;
  int64_t strides[3][kMaxDim];
  for (int i = 0; i < self.dim; ++i) {
    strides[0][i] = index.strides[i];
    strides[1][i] = i == d ? 0 : out.strides[i];
    strides[2][i] = src != nullptr ? src->strides[i] : 0;
  }
  size_t es = element_size(out.dtype);
  detail::for_each_offset<3>(index.sizes, index.dim, strides, [&](const int64_t* o) {
    if (e != Error::Ok) return;
    int64_t v = 0;
    e = detail::wrap_index(ctx, op, detail::load_index(index, o[0]), d, dim_size, &v, false);
    if (e != Error::Ok) return;
    const char* from =
        src != nullptr ? detail::element_ptr(*src, o[2]) : static_cast<const char*>(element);
    detail::copy_element(detail::element_ptr(out, o[1] + v * dim_stride), from, es);
  });
  return e;
}

Error op_scatter_src(KernelContext& ctx, Value** args) {
  return scatter(ctx, "scatter", args[0]->tensor, args[1]->i, args[2]->tensor, &args[3]->tensor,
                 nullptr, args[4]->tensor);
}

Error op_scatter_value(KernelContext& ctx, Value** args) {
  Tensor& out = args[4]->tensor;
  alignas(8) unsigned char element[8];
  Error e = detail::scalar_to_element(ctx, "scatter", *args[3], out.dtype, element);
  if (e != Error::Ok) return e;
  return scatter(ctx, "scatter", args[0]->tensor, args[1]->i, args[2]->tensor, nullptr, element,
                 out);
}

}  // namespace pocket
