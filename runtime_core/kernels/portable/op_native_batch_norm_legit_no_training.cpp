// aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)
//
// Inference batch norm with running statistics. Like ATen, the saved mean and rstd outputs
// are empty ([0]) tensors.
#include <cmath>

#include "nn_util.h"

namespace pocket {

namespace {

const char* const kOp = "_native_batch_norm_legit_no_training";

// x, y (batch, c, inner): y = x * scale[c] + shift[c]
template <typename T>
void batch_norm(const T* x, T* y, const T* w, const T* b, const T* mean, const T* var, double eps,
                int64_t batch, int64_t c, int64_t inner) {
  for (int64_t ch = 0; ch < c; ++ch) {
    double rstd = 1.0 / std::sqrt(static_cast<double>(var[ch]) + eps);
    double scale = rstd * (w != nullptr ? static_cast<double>(w[ch]) : 1.0);
    double shift = (b != nullptr ? static_cast<double>(b[ch]) : 0.0) - mean[ch] * scale;
    T sc = static_cast<T>(scale), sh = static_cast<T>(shift);
    for (int64_t n = 0; n < batch; ++n) {
      const T* xp = x + (n * c + ch) * inner;
      T* yp = y + (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * sc + sh;
    }
  }
}

Error check_args(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Error e = detail::expect_float_io(ctx, kOp, in, args[7]->tensor);
  if (e != Error::Ok) return e;
  if (in.dim < 2)
    return ctx.fail(Error::InvalidArgument, "%s: input has %d dims, expected at least 2 (N, C, ...)",
                    kOp, in.dim);
  int64_t c = in.sizes[1];
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int k = 0; k < 4; ++k) {
    if (args[1 + k]->is_none()) continue;
    e = detail::expect_vector(ctx, kOp, names[k], args[1 + k]->tensor, c, in.dtype);
    if (e != Error::Ok) return e;
  }
  return Error::Ok;
}

}  // namespace

Error op_native_batch_norm_legit_no_training(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;  // (batch, c, ...)
  double eps = args[6]->d;
  Tensor& out = args[7]->tensor;
  Error e = check_args(ctx, args);
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, out, in.sizes, in.dim);
  int64_t empty[1] = {0};
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, args[8]->tensor, empty, 1);
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, args[9]->tensor, empty, 1);
  if (e != Error::Ok) return e;
  int64_t batch = in.sizes[0], c = in.sizes[1], inner = 1;
  for (int d = 2; d < in.dim; ++d) inner *= in.sizes[d];
  Error dispatched = detail::dispatch_float(ctx, kOp, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* p[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};  // input, weight, bias, mean, var
    const char* names[5] = {"input", "weight", "bias", "running_mean", "running_var"};
    for (int k = 0; k < 5 && e == Error::Ok; ++k)
      if (!args[k]->is_none()) e = detail::contiguous_data(ctx, kOp, names[k], args[k]->tensor, &p[k]);
    if (e == Error::Ok)
      batch_norm(p[0], out.data_as<T>(), p[1], p[2], p[3], p[4], eps, batch, c, inner);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
