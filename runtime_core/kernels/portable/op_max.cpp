// aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
// aten::max(Tensor self) -> Tensor
#include "reduce_util.h"

namespace pocket {

Error op_max_dim(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& values = args[3]->tensor;
  Tensor& indices = args[4]->tensor;
  Error e = detail::expect_dtype(ctx, "max.dim", "values", values, in.dtype);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "max.dim", "indices", indices, ScalarType::Int64);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce_dim(ctx, "max.dim", in, args[1]->i, keepdim, &plan);
  if (e == Error::Ok) e = detail::expect_nonempty_reduction(ctx, "max.dim", plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "max.dim", values, plan.out_sizes, plan.out_dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, "max.dim", indices, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  int64_t* idx = indices.data_as<int64_t>();
  return detail::dispatch_dtype(ctx, "max.dim", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* val = values.data_as<T>();
    detail::for_each_extreme(in.data_as<const T>(), plan, /*want_max=*/true,
                             [&](int64_t o, T v, int64_t i) {
                               val[o] = v;
                               idx[o] = i;
                             });
  });
}

// The max of every element, a 0-d tensor (NaN if any element is NaN).
Error op_max(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[1]->tensor;
  Error e = detail::expect_dtype(ctx, "max", "output", out, in.dtype);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  detail::plan_reduce_all(in, /*keepdim=*/false, &plan);
  e = detail::expect_nonempty_reduction(ctx, "max", plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "max", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_dtype(ctx, "max", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data_as<T>();
    detail::for_each_extreme(in.data_as<const T>(), plan, /*want_max=*/true,
                             [&](int64_t o, T v, int64_t) { y[o] = v; });
  });
}

}  // namespace pocket
