// aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
//
// Indices are flat positions h * W + w within each input plane, as in ATen. A NaN in a window
// is its maximum (the last NaN wins, as in ATen); ties keep the first position.
#include <cmath>

#include "nn_util.h"
#include "parallel_util.h"

namespace pocket {

// Taps [lo, hi) of a window starting at `start` (stride `dil`) that fall inside [0, n).
static inline void taps_inside(int64_t start, int64_t dil, int64_t taps, int64_t n, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = taps;
  if (start >= 0 && start + (taps - 1) * dil < n) return;  // the common case: no division
  if (start < 0) *lo = (-start + dil - 1) / dil;
  const int64_t inside = start >= n ? 0 : (n - start + dil - 1) / dil;
  if (inside < *hi) *hi = inside;
}

// Planes [c0, c1) of x (planes, in_h, in_w) -> y, idx (planes, out_h, out_w)
template <typename T>
static void max_pool(const T* x, T* y, int64_t* idx, const detail::Pool2d& p, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; ++c) {
    const T* xp = x + c * p.in_h * p.in_w;
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      const int64_t h0 = oh * p.stride[0] - p.pad[0];
      int64_t kh0, kh1;
      taps_inside(h0, p.dil[0], p.k[0], p.in_h, &kh0, &kh1);
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        const int64_t w0 = ow * p.stride[1] - p.pad[1];
        int64_t kw0, kw1;
        taps_inside(w0, p.dil[1], p.k[1], p.in_w, &kw0, &kw1);
        T best = -INFINITY;
        int64_t best_i = -1;
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const int64_t row = (h0 + kh * p.dil[0]) * p.in_w;
          for (int64_t kw = kw0; kw < kw1; ++kw) {
            const int64_t i = row + w0 + kw * p.dil[1];
            const T v = xp[i];
            if (best_i < 0) best_i = i;  // a window of -inf reports its first
            if (v > best || detail::is_nan(v)) {
              best = v;
              best_i = i;
            }
          }
        }
        const int64_t o = (c * p.out_h + oh) * p.out_w + ow;
        y[o] = best;
        idx[o] = best_i;
      }
    }
  }
}

Error op_max_pool2d_with_indices(KernelContext& ctx, Value** args) {
  const char* op = "max_pool2d_with_indices";
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[6]->tensor;
  Tensor& indices = args[7]->tensor;
  detail::Pool2d p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "indices", indices, ScalarType::Int64);
  if (e == Error::Ok)
    e = detail::plan_pool2d(ctx, op, in, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                            &args[4]->int_list, args[5]->b, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, indices, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e != Error::Ok) return;
    const int64_t per_plane = p.out_h * p.out_w * p.k[0] * p.k[1];
    ctx.parallel_for(p.planes, detail::grain_for(per_plane), [&](int64_t c0, int64_t c1) {
      max_pool(x, out.data_as<T>(), indices.data_as<int64_t>(), p, c0, c1);
    });
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
