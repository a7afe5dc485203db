// aten::fill.Scalar(Tensor self, Scalar value) -> Tensor
#include "convert.h"

namespace pocket {

// A tensor shaped like self, every element `value` in self's dtype.
Error op_fill_scalar(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[2]->tensor;
  alignas(8) unsigned char element[8];
  Error e = detail::expect_dtype(ctx, "fill", "output", out, self.dtype);
  if (e == Error::Ok) e = detail::scalar_to_element(ctx, "fill", *args[1], out.dtype, element);
  if (e == Error::Ok) e = detail::resize_output(ctx, "fill", out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  detail::fill_elements(out, element);
  return Error::Ok;
}

}  // namespace pocket
