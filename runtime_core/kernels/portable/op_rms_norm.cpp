// pocket::rms_norm(Tensor x, Tensor weight, float eps) -> Tensor
//
// y = x * rsqrt(mean(x², last dim) + eps) * weight for x [..., D], weight [D]; float32,
// contiguous. The sum of squares is accumulated in double; each row's scale is then
// rounded to float as the unfused float32 graph rounds it. Parallel over rows.
#include <cmath>

#include "llm_util.h"
#include "parallel_util.h"

namespace pocket {
namespace detail {

Error prepare_rms_norm(KernelContext& ctx, Value** args, RmsNormArgs* a) {
  const Tensor& x = args[0]->tensor;
  const Tensor& w = args[1]->tensor;
  Tensor& out = args[3]->tensor;
  for (const Tensor* t : {&x, &w, static_cast<const Tensor*>(&out)}) {
    Error e = expect_dtype(ctx, "rms_norm", t == &x ? "x" : t == &w ? "weight" : "out", *t, ScalarType::Float32);
    if (e != Error::Ok) return e;
  }
  if (x.dim < 1 || w.dim != 1 || w.sizes[0] != x.sizes[x.dim - 1]) {
    char xs[96], ws[96];
    return ctx.fail(Error::InvalidArgument, "rms_norm: weight %s does not match the last dim of x %s",
                    shape_string(w.sizes, w.dim, ws, sizeof ws), shape_string(x.sizes, x.dim, xs, sizeof xs));
  }
  if (!x.is_contiguous() || !w.is_contiguous())
    return ctx.fail(Error::InvalidArgument, "rms_norm: x and weight must be contiguous");
  Error e = resize_output(ctx, "rms_norm", out, x.sizes, x.dim);
  if (e != Error::Ok) return e;
  a->d = w.sizes[0];
  a->rows = a->d == 0 ? 0 : x.numel() / a->d;
  a->x = x.data_as<const float>();
  a->w = w.data_as<const float>();
  a->y = out.data_as<float>();
  a->eps = static_cast<float>(args[2]->d);
  return Error::Ok;
}

void rms_norm_rows(const RmsNormArgs& a, int64_t r0, int64_t r1) {
  const int64_t d = a.d;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = a.x + r * d;
    float* y = a.y + r * d;
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + a.eps);
    for (int64_t i = 0; i < d; ++i) y[i] = (x[i] * scale) * a.w[i];
  }
}

void rms_norm_with(KernelContext& ctx, const RmsNormArgs& a, RmsNormRowsFn rows) {
  ctx.parallel_for(a.rows, grain_for(a.d * 3), [&](int64_t r0, int64_t r1) { rows(a, r0, r1); });
}

}  // namespace detail

Error op_rms_norm(KernelContext& ctx, Value** args) {
  detail::RmsNormArgs a;
  Error e = detail::prepare_rms_norm(ctx, args, &a);
  if (e == Error::Ok) detail::rms_norm_with(ctx, a, detail::rms_norm_rows);
  return e;
}

}  // namespace pocket
