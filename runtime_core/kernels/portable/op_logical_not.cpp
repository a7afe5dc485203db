// aten::logical_not(Tensor self) -> Tensor
#include "elementwise_util.h"

namespace pocket {

// True where self is zero; input of any dtype (read as bool), bool output.
Error op_logical_not(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[1]->tensor;
  Error e = detail::check_supported(ctx, "logical_not", in);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "logical_not", "out", out, ScalarType::Bool);
  if (e == Error::Ok) e = detail::resize_output(ctx, "logical_not", out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  auto f = [](bool x) { return !x; };
  detail::unary_loop<bool, bool>(ctx, in, out, f);
  return Error::Ok;
}

}  // namespace pocket
