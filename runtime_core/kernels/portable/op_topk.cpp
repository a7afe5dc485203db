// aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
#include "sort_util.h"

namespace pocket {

// The k largest (or smallest) elements of each line, always in sorted order (which `sorted`
// permits either way).
Error op_topk(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  int64_t k = args[1]->i;
  Tensor& values = args[5]->tensor;
  Tensor& indices = args[6]->tensor;
  int d = 0;
  Error e = detail::normalize_dim(ctx, "topk", args[2]->i, in.dim, &d);
  if (e != Error::Ok) return e;
  int64_t n = in.dim == 0 ? 1 : in.sizes[d];
  if (k < 0 || k > n)
    return ctx.fail(Error::OutOfRange, "topk: k %lld is out of range for dim %d of size %lld",
                    static_cast<long long>(k), d, static_cast<long long>(n));
  int64_t sizes[kMaxDim];
  for (int i = 0; i < in.dim; ++i) sizes[i] = i == d ? k : in.sizes[i];
  e = detail::expect_dtype(ctx, "topk", "values", values, in.dtype);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "topk", "indices", indices, ScalarType::Int64);
  if (e == Error::Ok) e = detail::resize_output(ctx, "topk", values, sizes, in.dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, "topk", indices, sizes, in.dim);
  if (e != Error::Ok) return e;
  Error r = Error::Ok;
  e = detail::dispatch_dtype(ctx, "topk", in.dtype, [&](auto tag) {
    r = detail::sort_lines<decltype(tag)>(ctx, "topk", in, d, k, args[3]->b, values, indices);
  });
  return e != Error::Ok ? e : r;
}

}  // namespace pocket
