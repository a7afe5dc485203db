// aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
#include <cmath>
#include <limits>

#include "reduce_util.h"

namespace pocket {

// One output per kept index, accumulated in double: ord 2 and 1 have their own loops (the
// common cases: F.normalize, L1 losses); +-inf are max/min of |x|, 0 counts nonzeros, any
// other p is (sum |x|^p)^(1/p).
template <typename T>
static void norm_lines(const T* x, const detail::ReducePlan& p, double ord, Tensor& out) {
  detail::for_each_output(p, [&](int64_t o, int64_t base) {
    double acc = 0;
    if (ord == 2) {
      detail::for_each_reduced(p, base, [&](int64_t i) { acc += double(x[i]) * double(x[i]); });
      acc = std::sqrt(acc);
    } else if (ord == 1) {
      detail::for_each_reduced(p, base, [&](int64_t i) { acc += std::fabs(double(x[i])); });
    } else if (std::isinf(ord)) {
      acc = ord > 0 ? 0.0 : std::numeric_limits<double>::infinity();
      detail::for_each_reduced(p, base, [&](int64_t i) {
        double a = std::fabs(double(x[i]));
        if (std::isnan(a) || std::isnan(acc)) acc = a + acc;  // NaN propagates
        else acc = ord > 0 ? std::fmax(acc, a) : std::fmin(acc, a);
      });
    } else if (ord == 0) {
      detail::for_each_reduced(p, base, [&](int64_t i) { acc += x[i] != T(0) ? 1.0 : 0.0; });
    } else {
      detail::for_each_reduced(p, base, [&](int64_t i) { acc += std::pow(std::fabs(double(x[i])), ord); });
      acc = std::pow(acc, 1.0 / ord);
    }
    detail::store_as<double>(out.data, out.dtype, o, acc);
  });
}

Error op_linalg_vector_norm(KernelContext& ctx, Value** args) {
  const char* op = "linalg_vector_norm";
  const Tensor& in = args[0]->tensor;
  double ord = args[1]->to_double();
  bool keepdim = args[3]->b;
  Tensor& out = args[5]->tensor;
  if (!is_floating(in.dtype) || !is_floating(out.dtype))
    return ctx.fail(Error::Unsupported, "%s: dtype %s -> %s is not supported (float32 or float64 expected)",
                    op, scalar_type_name(in.dtype), scalar_type_name(out.dtype));
  if (!args[4]->is_none() && args[4]->i != static_cast<int64_t>(out.dtype))
    return ctx.fail(Error::InvalidArgument, "%s: dtype argument %lld differs from the output dtype %s",
                    op, static_cast<long long>(args[4]->i), scalar_type_name(out.dtype));
  detail::ReducePlan plan;
  Error e = detail::plan_reduce(ctx, op, in, *args[2], keepdim, &plan);
  if (e == Error::Ok && ord < 0 && plan.red_numel == 0)
    return ctx.fail(Error::InvalidArgument, "%s: a norm of order %g over an empty dim is undefined", op, ord);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    norm_lines(in.data_as<const T>(), plan, ord, out);
  });
}

}  // namespace pocket
