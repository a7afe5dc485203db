#include "index_util.h"

namespace pocket {
namespace detail {

Error expect_index_tensor(KernelContext& ctx, const char* op, const Tensor& index) {
  if (index.dtype == ScalarType::Int64 || index.dtype == ScalarType::Int32) return Error::Ok;
  if (index.dtype == ScalarType::Bool || index.dtype == ScalarType::UInt8)
    return ctx.fail(Error::Unsupported,
                    "%s: boolean mask indices are not supported (use int64 indices)", op);
  return ctx.fail(Error::InvalidArgument, "%s: index tensors must be int64 or int32, got %s", op,
                  scalar_type_name(index.dtype));
}

Error plan_index(KernelContext& ctx, const char* op, const Tensor& self, const TensorList& indices,
                 IndexPlan* plan) {
  if (indices.size > static_cast<size_t>(self.dim))
    return ctx.fail(Error::InvalidArgument, "%s: too many indices for a %d-d tensor (%zu given)",
                    op, self.dim, indices.size);
  for (size_t k = 0; k < indices.size; ++k) {
    const Tensor* t = indices[k];
    if (t == nullptr) continue;
    Error e = expect_index_tensor(ctx, op, *t);
    if (e != Error::Ok) return e;
    plan->index[plan->count] = t;
    plan->indexed_dim[plan->count++] = static_cast<int>(k);
  }
  Error e = broadcast_shapes(ctx, op, plan->index, plan->count, plan->bsizes, &plan->bdim);
  if (e != Error::Ok) return e;
  for (int c = 0; c < plan->count; ++c)
    broadcast_strides(*plan->index[c], plan->bsizes, plan->bdim, plan->index_strides[c]);
  int first = plan->count > 0 ? plan->indexed_dim[0] : self.dim;
  bool adjacent = plan->count == 0 || plan->indexed_dim[plan->count - 1] - first == plan->count - 1;
  bool indexed[kMaxDim] = {};
  for (int c = 0; c < plan->count; ++c) indexed[plan->indexed_dim[c]] = true;
  for (int d = 0; d < self.dim; ++d) {
    if (indexed[d]) continue;
    if (adjacent && d < first)
      plan->pre[plan->npre++] = d;
    else
      plan->post[plan->npost++] = d;
  }
  plan->result_dim = plan->npre + plan->bdim + plan->npost;
  if (plan->result_dim > kMaxDim)
    return ctx.fail(Error::Unsupported,
                    "%s: the result would have %d dims, at most %d are supported", op,
                    plan->result_dim, kMaxDim);
  int r = 0;
  for (int i = 0; i < plan->npre; ++i) plan->result_sizes[r++] = self.sizes[plan->pre[i]];
  for (int i = 0; i < plan->bdim; ++i) plan->result_sizes[r++] = plan->bsizes[i];
  for (int i = 0; i < plan->npost; ++i) plan->result_sizes[r++] = self.sizes[plan->post[i]];
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
