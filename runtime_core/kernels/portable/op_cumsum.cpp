// aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
#include "reduce_util.h"

namespace pocket {

// Running sums along each line, accumulated in A (double, or uint64 to wrap like ATen).
template <typename T, typename A>
static void cumsum_lines(const Tensor& in, Tensor& out, int dim) {
  const T* x = in.data_as<const T>();
  detail::for_each_line(in, out, dim, [&](const detail::Line& l) {
    A acc = 0;
    for (int64_t k = 0; k < l.count; ++k) {
      acc += detail::to_acc<A>(x[l.in_base + k * l.in_stride]);
      detail::store_as<A>(out.data, out.dtype, l.out_base + k * l.out_stride, acc);
    }
  });
}

Error op_cumsum(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[3]->tensor;
  ScalarType want;
  int dim = 0;
  Error e = detail::sum_result_dtype(ctx, "cumsum", in, *args[2], &want);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "cumsum", "output", out, want);
  if (e == Error::Ok) e = detail::normalize_dim(ctx, "cumsum", args[1]->i, in.dim, &dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, "cumsum", out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  bool float_acc = is_floating(want);
  return detail::dispatch_dtype(ctx, "cumsum", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (float_acc)
      cumsum_lines<T, double>(in, out, dim);
    else
      cumsum_lines<T, uint64_t>(in, out, dim);
  });
}

}  // namespace pocket
