// aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
// aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
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

// Every element into one output (a 0-d tensor) or, with a dim, one output per line.
static Error prod(KernelContext& ctx, const Tensor& in, const Value* dim, bool keepdim,
                  const Value& dtype, Tensor& out) {
  ScalarType want;
  Error e = detail::sum_result_dtype(ctx, "prod", in, dtype, &want);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "prod", "output", out, want);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  if (dim == nullptr)
    detail::plan_reduce_all(in, keepdim, &plan);
  else
    e = detail::plan_reduce_dim(ctx, "prod", in, dim->i, keepdim, &plan);
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

Error op_prod_dim_int(KernelContext& ctx, Value** args) {
  return prod(ctx, args[0]->tensor, args[1], args[2]->b, *args[3], args[4]->tensor);
}

Error op_prod(KernelContext& ctx, Value** args) {
  return prod(ctx, args[0]->tensor, nullptr, false, *args[1], args[2]->tensor);
}

}  // namespace pocket
