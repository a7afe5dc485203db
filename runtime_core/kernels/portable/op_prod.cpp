// aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
#include "reduce_util.h"

namespace pocket {

template <typename T, typename A>
static void prod_lines(const T* x, const detail::ReducePlan& p, Tensor& out) {
  detail::for_each_output(p, [&](int64_t o, int64_t base) {
    A acc = 1;
    detail::for_each_reduced(p, base, [&](int64_t i) { acc *= detail::to_acc<A>(x[i]); });
    detail::store_as<A>(out.data, out.dtype, o, acc);
  });
}

Error op_prod_dim_int(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& out = args[4]->tensor;
  ScalarType want;
  Error e = detail::sum_result_dtype(ctx, "prod", in, *args[3], &want);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "prod", "output", out, want);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce_dim(ctx, "prod", in, args[1]->i, keepdim, &plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "prod", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  bool float_acc = is_floating(want);
  return detail::dispatch_dtype(ctx, "prod", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (float_acc)
      prod_lines<T, double>(in.data_as<const T>(), plan, out);
    else
      prod_lines<T, uint64_t>(in.data_as<const T>(), plan, out);
  });
}

}  // namespace pocket
