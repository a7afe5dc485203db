// Index tensors for the indexing kernels (index_select, gather, scatter, index.Tensor,
// index_put): dtype checks, bounds wrapping, and the plan and walk of numpy-style advanced
// indexing. Nothing here allocates.
#pragma once

#include "util.h"

namespace pocket {
namespace detail {

Error expect_index_tensor(KernelContext& ctx, const char* op, const Tensor& index);

inline int64_t load_index(const Tensor& index, int64_t offset) {
  if (index.dtype == ScalarType::Int32) return index.data_as<int32_t>()[offset];
  return index.data_as<int64_t>()[offset];
}

// Wraps a possibly negative index into [0, size) or fails naming op, dim and size. Ops
// whose ATen kernels reject negative indices (index_select, gather, scatter) pass
// negative_ok = false.
inline Error wrap_index(KernelContext& ctx, const char* op, int64_t v, int dim, int64_t size,
                        int64_t* out, bool negative_ok = true) {
  if (v < (negative_ok ? -size : 0) || v >= size)
    return ctx.fail(Error::OutOfRange, "%s: index %lld is out of bounds for dim %d with size %lld",
                    op, static_cast<long long>(v), dim, static_cast<long long>(size));
  *out = v < 0 ? v + size : v;
  return Error::Ok;
}

// ---- advanced indexing: self[indices] for index.Tensor and index_put
//
// The index tensors (non-None entries) broadcast to a shape B. When the indexed dims are
// adjacent the result is [dims before them] + B + [dims after them]; otherwise it is
// B + [all non-indexed dims] (numpy's rule).
struct IndexPlan {
  int count = 0;                                  // index tensors
  const Tensor* index[kMaxDim] = {};
  int indexed_dim[kMaxDim] = {};                  // the self dim each one indexes
  int64_t index_strides[kMaxDim][kMaxDim] = {};   // each index tensor's strides over B
  int64_t bsizes[kMaxDim] = {};
  int bdim = 0;
  int pre[kMaxDim] = {};                          // self dims before B in the result
  int npre = 0;
  int post[kMaxDim] = {};                         // self dims after B in the result
  int npost = 0;
  int64_t result_sizes[kMaxDim] = {};
  int result_dim = 0;
};

Error plan_index(KernelContext& ctx, const char* op, const Tensor& self, const TensorList& indices,
                 IndexPlan* plan);

// Calls f(target_offset, result_position) for each position of the pre dims and B, in
// result order: target_offset is the element offset in `target` (self's sizes, any strides)
// of the block spanned by the post dims, result_position the flat result index of its first
// element. Fails on an out-of-bounds index.
template <typename F>
Error walk_index(KernelContext& ctx, const char* op, const IndexPlan& plan, const Tensor& target,
                 F&& f) {
  int64_t pre_sizes[kMaxDim];
  int64_t pre_strides[1][kMaxDim];
  for (int i = 0; i < plan.npre; ++i) {
    pre_sizes[i] = target.sizes[plan.pre[i]];
    pre_strides[0][i] = target.strides[plan.pre[i]];
  }
  int64_t block = 1;
  for (int i = 0; i < plan.npost; ++i) block *= target.sizes[plan.post[i]];
  int64_t pos = 0;
  Error err = Error::Ok;
  for_each_offset<1>(pre_sizes, plan.npre, pre_strides, [&](const int64_t* po) {
    for_each_offset<kMaxDim>(plan.bsizes, plan.bdim, plan.index_strides, [&](const int64_t* io) {
      if (err != Error::Ok) return;
      int64_t offset = po[0];
      for (int c = 0; c < plan.count; ++c) {
        int d = plan.indexed_dim[c];
        int64_t v = 0;
        err = wrap_index(ctx, op, load_index(*plan.index[c], io[c]), d, target.sizes[d], &v);
        if (err != Error::Ok) return;
        offset += v * target.strides[d];
      }
      f(offset, pos);
      pos += block;
    });
  });
  return err;
}

}  // namespace detail
}  // namespace pocket
