// aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor
#include <algorithm>
#include <cmath>

#include "nn_util.h"

namespace pocket {

// Output pixel (y, x) copies input pixel (floor(y * step_h), floor(x * step_w)), clamped, as
// ATen's nearest_idx computes it (in float for float32, so the rounding matches).
template <typename T>
static Error nearest(KernelContext& ctx, const Tensor& in, const detail::Upsample2d& p, T* y) {
  const T* x = nullptr;
  Error e = detail::contiguous_data(ctx, "upsample_nearest2d", "input", in, &x);
  int64_t* cols = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(p.out_w) * sizeof(int64_t)));
  if (e == Error::Ok && cols == nullptr)
    return ctx.fail(Error::OutOfMemory, "upsample_nearest2d: no temp memory for %lld column indices",
                    static_cast<long long>(p.out_w));
  if (e != Error::Ok) return e;
  using S = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
  auto src = [](int64_t o, int64_t in_size, int64_t out_size, S step) {
    if (in_size == out_size) return o;
    if (out_size == 2 * in_size) return o >> 1;
    return std::min(static_cast<int64_t>(std::floor(static_cast<S>(o) * step)), in_size - 1);
  };
  S step_h = detail::upsample_step<S>(p.scale_h, p.in_h, p.out_h);
  S step_w = detail::upsample_step<S>(p.scale_w, p.in_w, p.out_w);
  for (int64_t ox = 0; ox < p.out_w; ++ox) cols[ox] = src(ox, p.in_w, p.out_w, step_w);
  for (int64_t plane = 0; plane < p.n * p.c; ++plane) {
    const T* xp = x + plane * p.in_h * p.in_w;
    for (int64_t oy = 0; oy < p.out_h; ++oy, y += p.out_w) {
      const T* row = xp + src(oy, p.in_h, p.out_h, step_h) * p.in_w;
      for (int64_t ox = 0; ox < p.out_w; ++ox) y[ox] = row[cols[ox]];
    }
  }
  return Error::Ok;
}

Error op_upsample_nearest2d_vec(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[3]->tensor;
  detail::Upsample2d p;
  Error e = detail::plan_upsample2d(ctx, "upsample_nearest2d", in, *args[1], *args[2], out, &p);
  if (e != Error::Ok) return e;
  Error r = Error::Ok;
  e = detail::dispatch_float(ctx, "upsample_nearest2d", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    r = nearest(ctx, in, p, out.data_as<T>());
  });
  return e != Error::Ok ? e : r;
}

}  // namespace pocket
