// aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor
#include "scatter_util.h"

namespace pocket {

Error op_scatter_reduce_two(KernelContext& ctx, Value** args) {
  detail::ScatterReduce r;
  Error e = detail::parse_scatter_reduce(ctx, "scatter_reduce", *args[4], &r);
  if (e != Error::Ok) return e;
  return detail::scatter_reduce(ctx, "scatter_reduce", args[0]->tensor, args[1]->i,
                                args[2]->tensor, args[3]->tensor, r, args[5]->b, args[6]->tensor);
}

}  // namespace pocket
