// aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
#include "sort_util.h"

namespace pocket {

Error op_sort(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& values = args[3]->tensor;
  Tensor& indices = args[4]->tensor;
  int d = 0;
  Error e = detail::normalize_dim(ctx, "sort", args[1]->i, in.dim, &d);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "sort", "values", values, in.dtype);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "sort", "indices", indices, ScalarType::Int64);
  if (e == Error::Ok) e = detail::resize_output(ctx, "sort", values, in.sizes, in.dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, "sort", indices, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  int64_t n = in.dim == 0 ? 1 : in.sizes[d];
  Error r = Error::Ok;
  e = detail::dispatch_dtype(ctx, "sort", in.dtype, [&](auto tag) {
    r = detail::sort_lines<decltype(tag)>(ctx, "sort", in, d, n, args[2]->b, values, indices);
  });
  return e != Error::Ok ? e : r;
}

}  // namespace pocket
