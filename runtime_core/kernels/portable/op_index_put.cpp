// aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
#include "index_util.h"
#include "shape_util.h"

namespace pocket {

// out = self with out[indices] = values (or += with accumulate), values broadcast to the
// shape self[indices] would have. KV-cache updates use this with None entries before the
// sequence dim: cache[:, :, pos] = v.
Error op_index_put(KernelContext& ctx, Value** args) {
  const char* op = "index_put";
  const Tensor& self = args[0]->tensor;
  const Tensor& values = args[2]->tensor;
  bool accumulate = args[3]->b;
  Tensor& out = args[4]->tensor;
  detail::IndexPlan plan;
  Tensor src;
  Error e = detail::expect_same_dtype(ctx, op, values, out);
  if (e == Error::Ok) e = detail::plan_index(ctx, op, self, args[1]->tensor_list, &plan);
  if (e == Error::Ok)
    e = detail::broadcast_view(ctx, op, "values", values, plan.result_sizes, plan.result_dim, &src);
  if (e == Error::Ok) e = detail::copy_to_output(ctx, op, self, out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  int64_t post_sizes[kMaxDim], post_strides[kMaxDim];
  for (int i = 0; i < plan.npost; ++i) {
    post_sizes[i] = out.sizes[plan.post[i]];
    post_strides[i] = out.strides[plan.post[i]];
  }
  // The values block for result position `pos`: the broadcast view's trailing npost dims.
  const int64_t* src_strides = src.strides + (plan.result_dim - plan.npost);
  bool empty = src.numel() == 0;  // indices are still checked
  return detail::walk_index(ctx, op, plan, out, [&](int64_t offset, int64_t pos) {
    if (empty) return;
    int64_t src_offset = 0;
    for (int d = plan.result_dim - 1; d >= 0; --d) {  // flat result index -> src offset
      src_offset += (pos % plan.result_sizes[d]) * src.strides[d];
      pos /= plan.result_sizes[d];
    }
    Tensor dst = detail::make_view(out, offset, post_sizes, post_strides, plan.npost);
    Tensor block = detail::make_view(src, src_offset, post_sizes, src_strides, plan.npost);
    if (accumulate)
      detail::accumulate_elements(dst, block);
    else
      detail::copy_elements(dst, block);
  });
}

}  // namespace pocket
