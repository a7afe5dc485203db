// pocket::rope(Tensor x, Tensor cos, Tensor sin) -> Tensor
//
// Rotary position embedding of x [B, T, H, D] with cos, sin [T, D], half-rotation layout
// (Hugging Face's rotate_half): with h = D / 2, for i < h
//   y[i]     = x[i]     * cos[i]     - x[i + h] * sin[i]
//   y[i + h] = x[i + h] * cos[i + h] + x[i]     * sin[i + h]
// float32, contiguous. Parallel over (b, t, head) rows.
#include "llm_util.h"
#include "parallel_util.h"

namespace pocket {
namespace detail {

Error prepare_rope(KernelContext& ctx, Value** args, RopeArgs* a) {
  const Tensor& x = args[0]->tensor;
  const Tensor& cos = args[1]->tensor;
  const Tensor& sin = args[2]->tensor;
  Tensor& out = args[3]->tensor;
  const char* names[] = {"x", "cos", "sin", "out"};
  const Tensor* ts[] = {&x, &cos, &sin, &out};
  for (int i = 0; i < 4; ++i) {
    Error e = expect_dtype(ctx, "rope", names[i], *ts[i], ScalarType::Float32);
    if (e != Error::Ok) return e;
    if (i < 3 && !ts[i]->is_contiguous())
      return ctx.fail(Error::InvalidArgument, "rope: %s must be contiguous", names[i]);
  }
  char xs[96], cs[96], ss[96];
  if (x.dim != 4 || x.sizes[3] % 2 != 0)
    return ctx.fail(Error::InvalidArgument, "rope: x must be [B, T, H, D] with D even, got %s",
                    shape_string(x.sizes, x.dim, xs, sizeof xs));
  const int64_t T = x.sizes[1], D = x.sizes[3];
  for (const Tensor* t : {&cos, &sin})
    if (t->dim != 2 || t->sizes[0] != T || t->sizes[1] != D)
      return ctx.fail(Error::InvalidArgument, "rope: cos %s and sin %s must be [T, D] = [%lld, %lld] for x %s",
                      shape_string(cos.sizes, cos.dim, cs, sizeof cs), shape_string(sin.sizes, sin.dim, ss, sizeof ss),
                      static_cast<long long>(T), static_cast<long long>(D), shape_string(x.sizes, 4, xs, sizeof xs));
  Error e = resize_output(ctx, "rope", out, x.sizes, 4);
  if (e != Error::Ok) return e;
  a->x = x.data_as<const float>();
  a->cos = cos.data_as<const float>();
  a->sin = sin.data_as<const float>();
  a->y = out.data_as<float>();
  a->B = x.sizes[0];
  a->T = T;
  a->H = x.sizes[2];
  a->D = D;
  return Error::Ok;
}

void rope_rows(const RopeArgs& a, int64_t r0, int64_t r1) {
  const int64_t D = a.D, h = D / 2;
  for (int64_t r = r0; r < r1; ++r) {  // r = (b * T + t) * H + head
    const float* x = a.x + r * D;
    const float* c = a.cos + (r / a.H % a.T) * D;
    const float* s = a.sin + (r / a.H % a.T) * D;
    float* y = a.y + r * D;
    for (int64_t i = 0; i < h; ++i) {
      const float lo = x[i], hi = x[i + h];
      y[i] = lo * c[i] - hi * s[i];
      y[i + h] = hi * c[i + h] + lo * s[i + h];
    }
  }
}

void rope_with(KernelContext& ctx, const RopeArgs& a, RopeRowsFn rows) {
  ctx.parallel_for(a.B * a.T * a.H, grain_for(a.D * 3), [&](int64_t r0, int64_t r1) { rows(a, r0, r1); });
}

}  // namespace detail

Error op_rope(KernelContext& ctx, Value** args) {
  detail::RopeArgs a;
  Error e = detail::prepare_rope(ctx, args, &a);
  if (e == Error::Ok) detail::rope_with(ctx, a, detail::rope_rows);
  return e;
}

}  // namespace pocket
