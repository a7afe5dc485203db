// aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
//
// Normalizes each group of C / group channels of each sample. Outputs the result and the
// per-(sample, group) mean and rstd = 1 / sqrt(biased variance + eps), shaped (N, group).
#include <cmath>

#include "nn_util.h"

namespace pocket {

namespace {

struct GroupNormShape {
  int64_t n, c, hw, groups;
};

// x, y (n, c, hw); w, b (c) or null; mean, rstd (n, groups)
template <typename T>
void group_norm(const T* x, const T* w, const T* b, double eps, const GroupNormShape& s, T* y,
                T* mean_out, T* rstd_out) {
  int64_t cg = s.c / s.groups, count = cg * s.hw;
  for (int64_t ng = 0; ng < s.n * s.groups; ++ng) {
    const T* xg = x + ng * count;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < count; ++i) sum += xg[i];
    double mean = sum / static_cast<double>(count);
    for (int64_t i = 0; i < count; ++i) sq += (xg[i] - mean) * (xg[i] - mean);
    double rstd = 1.0 / std::sqrt(sq / static_cast<double>(count) + eps);
    for (int64_t ch = (ng % s.groups) * cg, k = 0; k < cg; ++ch, ++k) {
      double scale = rstd * (w != nullptr ? static_cast<double>(w[ch]) : 1.0);
      double shift = (b != nullptr ? static_cast<double>(b[ch]) : 0.0) - mean * scale;
      const T* xc = xg + k * s.hw;
      T* yc = y + ng * count + k * s.hw;
      for (int64_t i = 0; i < s.hw; ++i) yc[i] = static_cast<T>(xc[i] * scale + shift);
    }
    mean_out[ng] = static_cast<T>(mean);
    rstd_out[ng] = static_cast<T>(rstd);
  }
}

Error check_args(KernelContext& ctx, const Tensor& in, Value** args, GroupNormShape* s) {
  *s = GroupNormShape{args[3]->i, args[4]->i, args[5]->i, args[6]->i};
  char a[128];
  int64_t inner = 1;
  for (int d = 2; d < in.dim; ++d) inner *= in.sizes[d];
  if (in.dim < 2 || in.sizes[0] != s->n || in.sizes[1] != s->c || inner != s->hw)
    return ctx.fail(Error::InvalidArgument,
                    "native_group_norm: input %s does not match N=%lld, C=%lld, HxW=%lld",
                    shape_string(in.sizes, in.dim, a, sizeof a), static_cast<long long>(s->n),
                    static_cast<long long>(s->c), static_cast<long long>(s->hw));
  if (s->groups < 1 || s->c % s->groups != 0)
    return ctx.fail(Error::InvalidArgument,
                    "native_group_norm: %lld channels cannot be split into %lld groups",
                    static_cast<long long>(s->c), static_cast<long long>(s->groups));
  for (int k = 1; k <= 2; ++k) {
    if (args[k]->is_none()) continue;
    Error e = detail::expect_vector(ctx, "native_group_norm", k == 1 ? "weight" : "bias",
                                    args[k]->tensor, s->c, in.dtype);
    if (e != Error::Ok) return e;
  }
  return Error::Ok;
}

}  // namespace

Error op_native_group_norm(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;  // (n, c, ...)
  double eps = args[7]->d;
  Tensor& out = args[8]->tensor;
  GroupNormShape s{0, 0, 0, 1};
  Error e = detail::expect_float_io(ctx, "native_group_norm", in, out);
  if (e == Error::Ok) e = check_args(ctx, in, args, &s);
  if (e == Error::Ok) e = detail::resize_output(ctx, "native_group_norm", out, in.sizes, in.dim);
  int64_t stat_sizes[2] = {s.n, s.groups};
  for (int k = 9; k <= 10 && e == Error::Ok; ++k) {
    Tensor& stat = args[k]->tensor;
    e = detail::expect_dtype(ctx, "native_group_norm", k == 9 ? "mean" : "rstd", stat, in.dtype);
    if (e == Error::Ok) e = detail::resize_output(ctx, "native_group_norm", stat, stat_sizes, 2);
  }
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, "native_group_norm", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = nullptr, *w = nullptr, *b = nullptr;
    e = detail::contiguous_data(ctx, "native_group_norm", "input", in, &x);
    if (e == Error::Ok && !args[1]->is_none())
      e = detail::contiguous_data(ctx, "native_group_norm", "weight", args[1]->tensor, &w);
    if (e == Error::Ok && !args[2]->is_none())
      e = detail::contiguous_data(ctx, "native_group_norm", "bias", args[2]->tensor, &b);
    if (e == Error::Ok)
      group_norm(x, w, b, eps, s, out.data_as<T>(), args[9]->tensor.data_as<T>(),
                 args[10]->tensor.data_as<T>());
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
