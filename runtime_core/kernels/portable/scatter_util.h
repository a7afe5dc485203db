// The index walk shared by scatter, scatter_add and scatter_reduce: out = self, then each
// element of `index` names the position along `dim` that src's element at the same place goes
// to (out[index[i][j]][j] for dim 0). Nothing here allocates.
#pragma once

#include "index_util.h"

namespace pocket {
namespace detail {

// Checks index (int64/int32, same rank, fits self and src except along dim), copies self into
// out and normalizes dim into *d. `src` may be null (scatter.value).
Error scatter_prepare(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                      const Tensor& index, const Tensor* src, Tensor& out, int* d);

// Calls f(out_offset, src_offset) for each index element in row-major order, out_offset being
// the target element (index value along dim, bounds-checked). Stops at the first bad index.
template <typename F>
Error scatter_walk(KernelContext& ctx, const char* op, int d, const Tensor& index,
                   const Tensor* src, const Tensor& out, F&& f) {
  int64_t dim_size = out.dim > 0 ? out.sizes[d] : 1;
  int64_t dim_stride = out.dim > 0 ? out.strides[d] : 0;
  int64_t strides[3][kMaxDim];
  for (int i = 0; i < index.dim; ++i) {
    strides[0][i] = index.strides[i];
    strides[1][i] = i == d ? 0 : out.strides[i];
    strides[2][i] = src != nullptr ? src->strides[i] : 0;
  }
  Error e = Error::Ok;
  for_each_offset<3>(index.sizes, index.dim, strides, [&](const int64_t* o) {
    if (e != Error::Ok) return;
    int64_t v = 0;
    e = wrap_index(ctx, op, load_index(index, o[0]), d, dim_size, &v, false);
    if (e == Error::Ok) f(o[1] + v * dim_stride, o[2]);
  });
  return e;
}

// The reductions of scatter_reduce ("sum", "prod", "mean", "amax", "amin") and of the older
// scatter.reduce ("add", "multiply").
enum class ScatterReduce { Sum, Prod, Mean, Amax, Amin };
Error parse_scatter_reduce(KernelContext& ctx, const char* op, const Value& name, ScatterReduce* r);

// out = self with src's elements folded in at the indexed positions by `r`. Without
// include_self a position that receives anything starts from src's elements alone; mean
// divides by the number of elements folded in (flooring for integers, as ATen). Bool: sum and
// amax are "or", prod and amin "and".
Error scatter_reduce(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                     const Tensor& index, const Tensor& src, ScatterReduce r, bool include_self,
                     Tensor& out);

}  // namespace detail
}  // namespace pocket
