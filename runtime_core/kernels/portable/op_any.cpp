// aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
// aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor
// aten::any(Tensor self) -> Tensor
#include "reduce_util.h"

namespace pocket {

// ATen returns uint8 for uint8 input and bool otherwise.
static Error any_into(KernelContext& ctx, const Tensor& in, const detail::ReducePlan& plan,
                      Tensor& out) {
  ScalarType want = in.dtype == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  Error e = detail::expect_dtype(ctx, "any", "output", out, want);
  if (e == Error::Ok) e = detail::resize_output(ctx, "any", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_dtype(ctx, "any", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_as<const T>();
    detail::for_each_output(plan, [&](int64_t o, int64_t base) {
      bool any = false;
      detail::for_each_reduced(plan, base, [&](int64_t i) { any = any || x[i] != T(0); });
      detail::store_as<int>(out.data, out.dtype, o, any ? 1 : 0);
    });
  });
}

Error op_any_dim(KernelContext& ctx, Value** args) {
  detail::ReducePlan plan;
  Error e = detail::plan_reduce_dim(ctx, "any", args[0]->tensor, args[1]->i, args[2]->b, &plan);
  if (e != Error::Ok) return e;
  return any_into(ctx, args[0]->tensor, plan, args[3]->tensor);
}

Error op_any_dims(KernelContext& ctx, Value** args) {
  detail::ReducePlan plan;
  Error e = detail::plan_reduce(ctx, "any", args[0]->tensor, *args[1], args[2]->b, &plan,
                                /*empty_is_all=*/false);
  if (e != Error::Ok) return e;
  return any_into(ctx, args[0]->tensor, plan, args[3]->tensor);
}

Error op_any(KernelContext& ctx, Value** args) {
  detail::ReducePlan plan;
  detail::plan_reduce_all(args[0]->tensor, /*keepdim=*/false, &plan);
  return any_into(ctx, args[0]->tensor, plan, args[1]->tensor);
}

}  // namespace pocket
