// aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
#include "convert.h"
#include "shape_util.h"

namespace pocket {

// The output's planned dtype is the result dtype; a dtype argument must agree with it.
Error op_full(KernelContext& ctx, Value** args) {
  Tensor& out = args[6]->tensor;
  int64_t sizes[kMaxDim];
  int dim = 0;
  alignas(8) unsigned char element[8];
  Error e = detail::check_dtype_arg(ctx, "full", *args[2], nullptr, out);
  if (e == Error::Ok) e = detail::read_sizes(ctx, "full", args[0]->int_list, sizes, &dim);
  if (e == Error::Ok) e = detail::scalar_to_element(ctx, "full", *args[1], out.dtype, element);
  if (e == Error::Ok) e = detail::resize_output(ctx, "full", out, sizes, dim);
  if (e != Error::Ok) return e;
  detail::fill_elements(out, element);
  return Error::Ok;
}

}  // namespace pocket
