// aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
#include "index_util.h"
#include "shape_util.h"

namespace pocket {

// Advanced indexing with int64/int32 index tensors (None entries keep a dim whole);
// see IndexPlan for the result shape. Boolean masks are not supported.
Error op_index_tensor(KernelContext& ctx, Value** args) {
  const char* op = "index.Tensor";
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[2]->tensor;
  detail::IndexPlan plan;
  Error e = detail::expect_same_dtype(ctx, op, self, out);
  if (e == Error::Ok) e = detail::plan_index(ctx, op, self, args[1]->tensor_list, &plan);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, plan.result_sizes, plan.result_dim);
  if (e != Error::Ok) return e;
  // Each visited position copies the block spanned by the post dims.
  int64_t sizes[kMaxDim], strides[kMaxDim];
  for (int i = 0; i < plan.npost; ++i) {
    sizes[i] = self.sizes[plan.post[i]];
    strides[i] = self.strides[plan.post[i]];
  }
  return detail::walk_index(ctx, op, plan, self, [&](int64_t offset, int64_t pos) {
    detail::copy_elements(detail::make_view(out, pos, sizes, nullptr, plan.npost),
                          detail::make_view(self, offset, sizes, strides, plan.npost));
  });
}

}  // namespace pocket
