// aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
#include "reduce_util.h"

namespace pocket {

Error op_amax(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, "amax", "output", out, in.dtype);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce(ctx, "amax", in, *args[1], keepdim, &plan);
  if (e == Error::Ok) e = detail::expect_nonempty_reduction(ctx, "amax", plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "amax", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_dtype(ctx, "amax", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data_as<T>();
    detail::for_each_extreme(in.data_as<const T>(), plan, /*want_max=*/true,
                             [&](int64_t o, T v, int64_t) { y[o] = v; });
  });
}

}  // namespace pocket
