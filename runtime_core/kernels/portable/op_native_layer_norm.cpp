// aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
//
// Normalizes over the last len(normalized_shape) dims. Outputs the result, and per row the
// mean and rstd = 1 / sqrt(biased variance + eps), shaped (leading dims..., 1, ..., 1).
#include <cmath>

#include "nn_util.h"

namespace pocket {

namespace {

// x, y (rows, cols); w, b (cols) or null; mean, rstd (rows)
template <typename T>
void layer_norm(const T* x, const T* w, const T* b, double eps, int64_t rows, int64_t cols, T* y,
                T* mean_out, T* rstd_out) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < cols; ++i) sum += xr[i];
    double mean = sum / static_cast<double>(cols);
    for (int64_t i = 0; i < cols; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    double rstd = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
    for (int64_t i = 0; i < cols; ++i) {
      double v = (xr[i] - mean) * rstd;
      if (w != nullptr) v *= w[i];
      if (b != nullptr) v += b[i];
      yr[i] = static_cast<T>(v);
    }
    mean_out[r] = static_cast<T>(mean);
    rstd_out[r] = static_cast<T>(rstd);
  }
}

// Checks that the last dims of `in` are normalized_shape and weight/bias have that shape;
// sets *axis to the first normalized dim.
Error check_shapes(KernelContext& ctx, const Tensor& in, const IntList& shape, Value** args,
                   int* axis) {
  char a[128];
  int m = static_cast<int>(shape.size);
  bool ok = m >= 1 && m <= in.dim;
  for (int i = 0; ok && i < m; ++i) ok = in.sizes[in.dim - m + i] == shape[static_cast<size_t>(i)];
  if (!ok)
    return ctx.fail(Error::InvalidArgument,
                    "native_layer_norm: normalized_shape (%d dims) does not match the last dims "
                    "of input %s",
                    m, shape_string(in.sizes, in.dim, a, sizeof a));
  for (int k = 2; k <= 3; ++k) {
    if (args[k]->is_none()) continue;
    const Tensor& t = args[k]->tensor;
    bool same = t.dim == m;
    for (int i = 0; same && i < m; ++i) same = t.sizes[i] == shape[static_cast<size_t>(i)];
    if (!same)
      return ctx.fail(Error::InvalidArgument,
                      "native_layer_norm: %s has shape %s, expected normalized_shape",
                      k == 2 ? "weight" : "bias", shape_string(t.sizes, t.dim, a, sizeof a));
    Error e = detail::expect_dtype(ctx, "native_layer_norm", k == 2 ? "weight" : "bias", t, in.dtype);
    if (e != Error::Ok) return e;
  }
  *axis = in.dim - m;
  return Error::Ok;
}

}  // namespace

Error op_native_layer_norm(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;  // (rows..., cols...)
  double eps = args[4]->d;
  Tensor& out = args[5]->tensor;
  int axis = 0;
  Error e = detail::expect_float_io(ctx, "native_layer_norm", in, out);
  if (e == Error::Ok) e = check_shapes(ctx, in, args[1]->int_list, args, &axis);
  if (e != Error::Ok) return e;
  int64_t stat_sizes[kMaxDim];
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < in.dim; ++d) {
    stat_sizes[d] = d < axis ? in.sizes[d] : 1;
    (d < axis ? rows : cols) *= in.sizes[d];
  }
  e = detail::resize_output(ctx, "native_layer_norm", out, in.sizes, in.dim);
  for (int k = 6; k <= 7 && e == Error::Ok; ++k) {
    Tensor& stat = args[k]->tensor;
    e = detail::expect_dtype(ctx, "native_layer_norm", k == 6 ? "mean" : "rstd", stat, in.dtype);
    if (e == Error::Ok) e = detail::resize_output(ctx, "native_layer_norm", stat, stat_sizes, in.dim);
  }
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, "native_layer_norm", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = nullptr, *w = nullptr, *b = nullptr;
    e = detail::contiguous_data(ctx, "native_layer_norm", "input", in, &x);
    if (e == Error::Ok && !args[2]->is_none())
      e = detail::contiguous_data(ctx, "native_layer_norm", "weight", args[2]->tensor, &w);
    if (e == Error::Ok && !args[3]->is_none())
      e = detail::contiguous_data(ctx, "native_layer_norm", "bias", args[3]->tensor, &b);
    if (e == Error::Ok)
      layer_norm(x, w, b, eps, rows, cols, out.data_as<T>(), args[6]->tensor.data_as<T>(),
                 args[7]->tensor.data_as<T>());
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
