// aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor
#include <algorithm>
#include <type_traits>

#include "nn_util.h"

namespace pocket {

// One output coordinate's two source taps and weights (ATen's area_pixel_compute_source_index).
template <typename S>
struct Taps {
  int64_t i0, i1;
  S w0, w1;
};

template <typename S>
static Taps<S> taps(int64_t o, int64_t in_size, int64_t out_size, double scale, bool align_corners) {
  S step, src;
  if (align_corners) {
    step = out_size > 1 ? static_cast<S>(in_size - 1) / static_cast<S>(out_size - 1) : S(0);
    src = step * static_cast<S>(o);
  } else {
    step = detail::upsample_step<S>(scale, in_size, out_size);
    src = std::max(step * (static_cast<S>(o) + S(0.5)) - S(0.5), S(0));
  }
  Taps<S> t;
  t.i0 = std::min(static_cast<int64_t>(src), in_size - 1);
  t.i1 = t.i0 + (t.i0 < in_size - 1 ? 1 : 0);
  t.w1 = std::min(src - static_cast<S>(t.i0), S(1));
  t.w0 = S(1) - t.w1;
  return t;
}

// Taps per output column are computed once (temp memory), rows as they come.
template <typename T>
static Error bilinear(KernelContext& ctx, const Tensor& in, const detail::Upsample2d& p,
                      bool align_corners, T* y) {
  const char* op = "upsample_bilinear2d";
  using S = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
  const T* x = nullptr;
  Error e = detail::contiguous_data(ctx, op, "input", in, &x);
  if (e != Error::Ok) return e;
  auto* cols = static_cast<Taps<S>*>(ctx.allocate_temp(static_cast<size_t>(p.out_w) * sizeof(Taps<S>)));
  if (cols == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for %lld column taps", op,
                    static_cast<long long>(p.out_w));
  for (int64_t ox = 0; ox < p.out_w; ++ox) cols[ox] = taps<S>(ox, p.in_w, p.out_w, p.scale_w, align_corners);
  for (int64_t plane = 0; plane < p.n * p.c; ++plane) {
    const T* xp = x + plane * p.in_h * p.in_w;
    for (int64_t oy = 0; oy < p.out_h; ++oy, y += p.out_w) {
      Taps<S> r = taps<S>(oy, p.in_h, p.out_h, p.scale_h, align_corners);
      const T* r0 = xp + r.i0 * p.in_w;
      const T* r1 = xp + r.i1 * p.in_w;
      for (int64_t ox = 0; ox < p.out_w; ++ox) {
        const Taps<S>& c = cols[ox];
        y[ox] = static_cast<T>(r.w0 * (c.w0 * r0[c.i0] + c.w1 * r0[c.i1]) +
                               r.w1 * (c.w0 * r1[c.i0] + c.w1 * r1[c.i1]));
      }
    }
  }
  return Error::Ok;
}

Error op_upsample_bilinear2d_vec(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[4]->tensor;
  detail::Upsample2d p;
  Error e = detail::plan_upsample2d(ctx, "upsample_bilinear2d", in, *args[1], *args[3], out, &p);
  if (e != Error::Ok) return e;
  Error r = Error::Ok;
  e = detail::dispatch_float(ctx, "upsample_bilinear2d", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    r = bilinear(ctx, in, p, args[2]->b, out.data_as<T>());
  });
  return e != Error::Ok ? e : r;
}

}  // namespace pocket
