// aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
#include "shape_util.h"

namespace pocket {

// The contents of an empty tensor are unspecified; Pocket zeroes them so runs repeat exactly.
Error op_empty_memory_format(KernelContext& ctx, Value** args) {
  Tensor& out = args[6]->tensor;
  int64_t sizes[kMaxDim];
  int dim = 0;
  Error e = detail::check_dtype_arg(ctx, "empty", *args[1], nullptr, out);
  if (e == Error::Ok) e = detail::read_sizes(ctx, "empty", args[0]->int_list, sizes, &dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, "empty", out, sizes, dim);
  if (e != Error::Ok) return e;
  std::memset(out.data, 0, out.nbytes());
  return Error::Ok;
}

}  // namespace pocket
