// aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor
#include "convert.h"
#include "shape_util.h"

namespace pocket {

// Converts to the output dtype: float16/bfloat16 round to nearest even, to bool is != 0,
// float to int truncates (see detail::store_double for out-of-range values).
Error op_to_copy(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[7]->tensor;
  Error e = detail::check_dtype_arg(ctx, "_to_copy", *args[1], &self, out);
  if (e == Error::Ok) e = detail::resize_output(ctx, "_to_copy", out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  detail::convert_elements(out, self);
  return Error::Ok;
}

}  // namespace pocket
