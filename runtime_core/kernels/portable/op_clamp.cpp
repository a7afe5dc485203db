// aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
// aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
#include "elementwise_util.h"

namespace pocket {

using detail::Kinds;

// min(max(x, min), max) in the output's dtype: NaN in x or a bound propagates, and min > max
// gives max, as in torch. The exporter passes Scalar? bounds as doubles (or None).
Error op_clamp(KernelContext& ctx, Value** args) {
  const Value& lo = *args[1];
  const Value& hi = *args[2];
  Tensor& out = args[3]->tensor;
  if (lo.is_none() && hi.is_none())
    return ctx.fail(Error::InvalidArgument, "clamp: at least one of min and max must not be None");
  return detail::unary_op<Kinds::Numeric>(ctx, "clamp", out.dtype, args[0]->tensor, out,
                                          [&](auto x) {
    using T = decltype(x);
    if (!lo.is_none()) x = detail::max_nan(x, static_cast<T>(lo.d));
    if (!hi.is_none()) x = detail::min_nan(x, static_cast<T>(hi.d));
    return x;
  });
}

// Bounds are tensors broadcast with self; either may be None.
Error op_clamp_tensor(KernelContext& ctx, Value** args) {
  const Tensor& x = args[0]->tensor;
  const Value& lo = *args[1];
  const Value& hi = *args[2];
  Tensor& out = args[3]->tensor;
  auto clamp_min = [](auto v, auto m) { return detail::max_nan(v, m); };
  auto clamp_max = [](auto v, auto m) { return detail::min_nan(v, m); };
  if (lo.is_none() && hi.is_none())
    return ctx.fail(Error::InvalidArgument, "clamp: at least one of min and max must not be None");
  if (hi.is_none())
    return detail::binary_op<Kinds::Numeric>(ctx, "clamp", out.dtype, x, lo.tensor, out, clamp_min);
  if (lo.is_none())
    return detail::binary_op<Kinds::Numeric>(ctx, "clamp", out.dtype, x, hi.tensor, out, clamp_max);
  const Tensor* ins[3] = {&x, &lo.tensor, &hi.tensor};
  int64_t strides[3][kMaxDim];
  Error e = detail::broadcast_inputs(ctx, "clamp", ins, 3, out, strides);
  if (e != Error::Ok) return e;
  return detail::dispatch_kinds<Kinds::Numeric>(ctx, "clamp", out.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto clamp = [](T v, T a, T b) { return detail::min_nan(detail::max_nan(v, a), b); };
    detail::ternary_loop<T, T>(x, lo.tensor, hi.tensor, out, strides, clamp);
  });
}

}  // namespace pocket
