// aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
#include "scatter_util.h"

namespace pocket {

// out = self, then out[index[i][j]][j] += src[i][j] for dim 0 (likewise for other dims).
Error op_scatter_add(KernelContext& ctx, Value** args) {
  return detail::scatter_reduce(ctx, "scatter_add", args[0]->tensor, args[1]->i, args[2]->tensor,
                                args[3]->tensor, detail::ScatterReduce::Sum, /*include_self=*/true,
                                args[4]->tensor);
}

}  // namespace pocket
