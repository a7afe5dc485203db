// aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
// aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
#include <algorithm>

#include "reduce_util.h"

namespace pocket {

// Two passes in double per output: the mean, then the sum of squared deviations.
template <typename T>
static void var_lines(const T* x, const detail::ReducePlan& p, double correction, T* y) {
  double divisor = std::max(0.0, static_cast<double>(p.red_numel) - correction);
  detail::for_each_output(p, [&](int64_t o, int64_t base) {
    double sum = 0;
    detail::for_each_reduced(p, base, [&](int64_t i) { sum += x[i]; });
    double mean = sum / static_cast<double>(p.red_numel);
    double sq = 0;
    detail::for_each_reduced(p, base, [&](int64_t i) {
      double d = x[i] - mean;
      sq += d * d;
    });
    y[o] = static_cast<T>(sq / divisor);
  });
}

static Error var(KernelContext& ctx, const Tensor& in, const Value& dims, double correction,
                 bool keepdim, Tensor& out) {
  Error e = detail::expect_float_io(ctx, "var", in, out);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  e = detail::plan_reduce(ctx, "var", in, dims, keepdim, &plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, "var", out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_float(ctx, "var", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    var_lines(in.data_as<const T>(), plan, correction, out.data_as<T>());
  });
}

Error op_var_correction(KernelContext& ctx, Value** args) {
  const Value& corr = *args[2];
  // None means Bessel's correction (1); an int correction is accepted as well as a double.
  double correction = corr.is_none() ? 1.0 : corr.to_double();
  return var(ctx, args[0]->tensor, *args[1], correction, args[3]->b, args[4]->tensor);
}

Error op_var_dim(KernelContext& ctx, Value** args) {
  return var(ctx, args[0]->tensor, *args[1], args[2]->b ? 1.0 : 0.0, args[3]->b, args[4]->tensor);
}

}  // namespace pocket
