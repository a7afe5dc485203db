// aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
#include "convert.h"
#include "shape_util.h"

namespace pocket {

Error op_scalar_tensor(KernelContext& ctx, Value** args) {
  Tensor& out = args[5]->tensor;
  alignas(8) unsigned char element[8];
  Error e = detail::check_dtype_arg(ctx, "scalar_tensor", *args[1], nullptr, out);
  if (e == Error::Ok)
    e = detail::scalar_to_element(ctx, "scalar_tensor", *args[0], out.dtype, element);
  if (e == Error::Ok) e = detail::resize_output(ctx, "scalar_tensor", out, nullptr, 0);
  if (e != Error::Ok) return e;
  detail::fill_elements(out, element);
  return Error::Ok;
}

}  // namespace pocket
