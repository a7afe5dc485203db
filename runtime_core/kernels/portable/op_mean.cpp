// aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
// aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
#include "reduce_util.h"

namespace pocket {

static Error mean_into(KernelContext& ctx, const Tensor& in, const Value& dims, bool keepdim,
                       const Value& dtype, Tensor& out) {
  ScalarType want;
  Error e = detail::sum_result_dtype(ctx, "mean", in, dtype, &want);
  if (e != Error::Ok) return e;
  if (!is_floating(want))
    return ctx.fail(Error::InvalidArgument,
                    "mean: result dtype would be %s; mean needs a float input or a float dtype",
                    scalar_type_name(want));
  e = detail::expect_dtype(ctx, "mean", "output", out, want);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce(ctx, "mean", in, dims, keepdim, &plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "mean", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::reduce_sum(ctx, "mean", in, plan, out, /*mean=*/true);
}

Error op_mean_dim(KernelContext& ctx, Value** args) {
  return mean_into(ctx, args[0]->tensor, *args[1], args[2]->b, *args[3], args[4]->tensor);
}

Error op_mean(KernelContext& ctx, Value** args) {
  Value all;  // None: every dim
  return mean_into(ctx, args[0]->tensor, all, false, *args[1], args[2]->tensor);
}

}  // namespace pocket
