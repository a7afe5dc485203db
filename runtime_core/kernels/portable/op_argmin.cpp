// aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
#include "reduce_util.h"

namespace pocket {

Error op_argmin(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, "argmin", "output", out, ScalarType::Int64);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  if (args[1]->is_none())
    detail::plan_reduce_all(in, keepdim, &plan);  // index into the flattened tensor
  else
    e = detail::plan_reduce_dim(ctx, "argmin", in, args[1]->i, keepdim, &plan);
  if (e == Error::Ok) e = detail::expect_nonempty_reduction(ctx, "argmin", plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "argmin", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  int64_t* y = out.data_as<int64_t>();
  return detail::dispatch_dtype(ctx, "argmin", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    detail::for_each_extreme(in.data_as<const T>(), plan, /*want_max=*/false,
                             [&](int64_t o, T, int64_t i) { y[o] = i; });
  });
}

}  // namespace pocket
