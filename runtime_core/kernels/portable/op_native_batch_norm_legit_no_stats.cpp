// aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
//
// Batch norm over the batch's own statistics, without running stats: what instance norm
// (F.instance_norm, nn.InstanceNorm*d) exports to, on the input viewed as (1, N * C, ...).
// Outputs: y, and per channel the mean and 1 / sqrt(biased variance + eps).
#include <cmath>

#include "nn_util.h"

namespace pocket {

namespace {

const char* const kOp = "_native_batch_norm_legit.no_stats";

// x, y (batch, c, inner); mean, rstd (c)
template <typename T>
void norm_with_batch_stats(const T* x, T* y, const T* w, const T* b, double eps, int64_t batch,
                           int64_t c, int64_t inner, T* mean_out, T* rstd_out) {
  const double count = static_cast<double>(batch * inner);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const T* xp = x + (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) sum += xp[i];
    }
    const double mean = sum / count;
    for (int64_t n = 0; n < batch; ++n) {  // two passes: no cancellation for large means
      const T* xp = x + (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
    }
    const double rstd = 1.0 / std::sqrt(sq / count + eps);
    const double scale = rstd * (w != nullptr ? static_cast<double>(w[ch]) : 1.0);
    const double shift = (b != nullptr ? static_cast<double>(b[ch]) : 0.0) - mean * scale;
    for (int64_t n = 0; n < batch; ++n) {
      const T* xp = x + (n * c + ch) * inner;
      T* yp = y + (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) yp[i] = static_cast<T>(xp[i] * scale + shift);
    }
    mean_out[ch] = static_cast<T>(mean);
    rstd_out[ch] = static_cast<T>(rstd);
  }
}

Error check_args(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Error e = detail::expect_float_io(ctx, kOp, in, args[6]->tensor);
  if (e != Error::Ok) return e;
  if (!args[3]->b)
    return ctx.fail(Error::InvalidArgument,
                    "%s: training=False needs running statistics (use _native_batch_norm_legit_no_training)", kOp);
  if (in.dim < 2)
    return ctx.fail(Error::InvalidArgument, "%s: input has %d dims, expected at least 2 (N, C, ...)",
                    kOp, in.dim);
  const char* names[2] = {"weight", "bias"};
  for (int k = 0; k < 2 && e == Error::Ok; ++k)
    if (!args[1 + k]->is_none())
      e = detail::expect_vector(ctx, kOp, names[k], args[1 + k]->tensor, in.sizes[1], in.dtype);
  if (e == Error::Ok && in.numel() == 0)
    return ctx.fail(Error::InvalidArgument, "%s: input is empty (no values to take statistics of)", kOp);
  return e;
}

}  // namespace

Error op_native_batch_norm_legit_no_stats(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;  // (batch, c, ...)
  const double eps = args[5]->d;
  Tensor &out = args[6]->tensor, &mean = args[7]->tensor, &rstd = args[8]->tensor;
  Error e = check_args(ctx, args);
  if (e != Error::Ok) return e;
  const int64_t batch = in.sizes[0], c = in.sizes[1];
  int64_t inner = 1;
  for (int d = 2; d < in.dim; ++d) inner *= in.sizes[d];
  e = detail::resize_output(ctx, kOp, out, in.sizes, in.dim);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, kOp, "save_mean", mean, in.dtype);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, kOp, "save_invstd", rstd, in.dtype);
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, mean, &c, 1);
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, rstd, &c, 1);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, kOp, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* p[3] = {nullptr, nullptr, nullptr};  // input, weight, bias
    const char* names[3] = {"input", "weight", "bias"};
    for (int k = 0; k < 3 && e == Error::Ok; ++k)
      if (!args[k]->is_none()) e = detail::contiguous_data(ctx, kOp, names[k], args[k]->tensor, &p[k]);
    if (e == Error::Ok)
      norm_with_batch_stats(p[0], out.data_as<T>(), p[1], p[2], eps, batch, c, inner,
                            mean.data_as<T>(), rstd.data_as<T>());
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
