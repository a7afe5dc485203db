// aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// condition ? self : other over three broadcast inputs, in the output's dtype.
Error op_where_self(KernelContext& ctx, Value** args) {
  const Tensor& cond = args[0]->tensor;
  const Tensor& a = args[1]->tensor;
  const Tensor& b = args[2]->tensor;
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, "where", "condition", cond, ScalarType::Bool);
  if (e != Error::Ok) return e;
  const Tensor* ins[3] = {&cond, &a, &b};
  int64_t strides[3][kMaxDim];
  e = detail::broadcast_inputs(ctx, "where", ins, 3, out, strides);
  if (e != Error::Ok) return e;
  return detail::dispatch_kinds<detail::Kinds::All>(ctx, "where", out.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto select = [](bool c, T x, T y) { return c ? x : y; };
    detail::ternary_loop<bool, T>(cond, a, b, out, strides, select);
  });
}

}  // namespace pocket
