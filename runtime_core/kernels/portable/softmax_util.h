// Softmax and log-softmax along one dim, shared by op_softmax.cpp and op_log_softmax.cpp.
#pragma once

#include <cmath>

#include "reduce_util.h"

namespace pocket {
namespace detail {

// y = softmax(x) (or log_softmax when `log`) along one line; max-subtracted, the sum of
// exponentials accumulated in double.
template <typename T>
void softmax_line(const T* x, T* y, const Line& l, bool log) {
  T m = -INFINITY;
  for (int64_t k = 0; k < l.count; ++k) {
    T v = x[l.in_base + k * l.in_stride];
    m = (v > m || is_nan(v)) ? v : m;
  }
  double sum = 0;
  for (int64_t k = 0; k < l.count; ++k) {
    T e = std::exp(x[l.in_base + k * l.in_stride] - m);
    if (!log) y[l.out_base + k * l.out_stride] = e;
    sum += e;
  }
  if (log) {
    T shift = m + static_cast<T>(std::log(sum));
    for (int64_t k = 0; k < l.count; ++k)
      y[l.out_base + k * l.out_stride] = x[l.in_base + k * l.in_stride] - shift;
  } else {
    T inv = static_cast<T>(1.0 / sum);
    for (int64_t k = 0; k < l.count; ++k) y[l.out_base + k * l.out_stride] *= inv;
  }
}

// Checks the arguments of _softmax / _log_softmax, resizes `out` and runs every line.
inline Error softmax_into(KernelContext& ctx, const char* op, const Tensor& in, int64_t dim,
                          bool half_to_float, Tensor& out, bool log) {
  if (half_to_float)
    return ctx.fail(Error::Unsupported, "%s: half_to_float=True needs float16 input, which is not "
                    "supported", op);
  int d = 0;
  Error e = expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, in.dim, &d);
  if (e == Error::Ok) e = resize_output(ctx, op, out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  return dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_as<const T>();
    T* y = out.data_as<T>();
    for_each_line(in, out, d, [&](const Line& l) { softmax_line(x, y, l, log); });
  });
}

}  // namespace detail
}  // namespace pocket
