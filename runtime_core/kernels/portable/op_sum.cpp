// aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
#include "reduce_util.h"

namespace pocket {

Error op_sum_dim_intlist(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& out = args[4]->tensor;
  ScalarType want;
  Error e = detail::sum_result_dtype(ctx, "sum", in, *args[3], &want);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "sum", "output", out, want);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce(ctx, "sum", in, *args[1], keepdim, &plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "sum", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::reduce_sum(ctx, "sum", in, plan, out, /*mean=*/false);
}

}  // namespace pocket
