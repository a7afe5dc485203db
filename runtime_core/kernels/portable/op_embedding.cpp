// aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
//
// Gathers rows of weight; padding_idx, scale_grad_by_freq and sparse only affect gradients.
#include "nn_util.h"

namespace pocket {

// w (rows, cols) gathered by idx (any shape) -> y (idx shape..., cols). Fails on the first
// index outside [0, rows).
template <typename T, typename I>
static Error gather_rows(KernelContext& ctx, const Tensor& weight, const Tensor& indices, T* y) {
  const T* w = weight.data_as<const T>();
  const I* idx = indices.data_as<const I>();
  int64_t rows = weight.sizes[0], cols = weight.sizes[1];
  int64_t strides[1][kMaxDim];
  for (int d = 0; d < indices.dim; ++d) strides[0][d] = indices.strides[d];
  int64_t n = 0, bad = 0;
  bool ok = true;
  detail::for_each_offset<1>(indices.sizes, indices.dim, strides, [&](const int64_t* o) {
    int64_t r = static_cast<int64_t>(idx[o[0]]);
    if (!ok || r < 0 || r >= rows) {
      if (ok) bad = r;
      ok = false;
      return;
    }
    for (int64_t c = 0; c < cols; ++c)
      y[n * cols + c] = w[r * weight.strides[0] + c * weight.strides[1]];
    ++n;
  });
  if (!ok)
    return ctx.fail(Error::OutOfRange,
                    "embedding: index %lld is out of range for a weight of %lld rows",
                    static_cast<long long>(bad), static_cast<long long>(rows));
  return Error::Ok;
}

Error op_embedding(KernelContext& ctx, Value** args) {
  const Tensor& weight = args[0]->tensor;   // (rows, cols)
  const Tensor& indices = args[1]->tensor;  // (...)
  Tensor& out = args[5]->tensor;            // (..., cols)
  char buf[128];
  if (weight.dim != 2)
    return ctx.fail(Error::InvalidArgument, "embedding: weight has shape %s, expected 2 dims",
                    shape_string(weight.sizes, weight.dim, buf, sizeof buf));
  if (indices.dtype != ScalarType::Int64 && indices.dtype != ScalarType::Int32)
    return ctx.fail(Error::InvalidArgument,
                    "embedding: indices have dtype %s, expected int64 or int32",
                    scalar_type_name(indices.dtype));
  if (indices.dim + 1 > kMaxDim)
    return ctx.fail(Error::InvalidArgument, "embedding: indices have %d dims, at most %d supported",
                    indices.dim, kMaxDim - 1);
  Error e = detail::expect_dtype(ctx, "embedding", "output", out, weight.dtype);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  for (int d = 0; d < indices.dim; ++d) sizes[d] = indices.sizes[d];
  sizes[indices.dim] = weight.sizes[1];
  e = detail::resize_output(ctx, "embedding", out, sizes, indices.dim + 1);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_dtype(ctx, "embedding", weight.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (indices.dtype == ScalarType::Int64)
      e = gather_rows<T, int64_t>(ctx, weight, indices, out.data_as<T>());
    else
      e = gather_rows<T, int32_t>(ctx, weight, indices, out.data_as<T>());
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
