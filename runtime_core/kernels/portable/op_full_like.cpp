// aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
#include "convert.h"
#include "shape_util.h"

namespace pocket {

Error op_full_like(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[7]->tensor;
  alignas(8) unsigned char element[8];
  Error e = detail::check_dtype_arg(ctx, "full_like", *args[2], &self, out);
  if (e == Error::Ok) e = detail::scalar_to_element(ctx, "full_like", *args[1], out.dtype, element);
  if (e == Error::Ok) e = detail::resize_output(ctx, "full_like", out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  detail::fill_elements(out, element);
  return Error::Ok;
}

}  // namespace pocket
