// aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
//
// Indices are flat positions h * W + w within each input plane, as in ATen. A NaN in a window
// is its maximum (the last NaN wins, as in ATen); ties keep the first position.
#include <cmath>

#include "nn_util.h"

namespace pocket {

// x (planes, in_h, in_w) -> y, idx (planes, out_h, out_w)
template <typename T>
static void max_pool(const T* x, T* y, int64_t* idx, const detail::Pool2d& p) {
  for (int64_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * p.in_h * p.in_w;
    for (int64_t oh = 0; oh < p.out_h; ++oh)
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        int64_t h0 = oh * p.stride[0] - p.pad[0], w0 = ow * p.stride[1] - p.pad[1];
        T best = -INFINITY;
        int64_t best_i = -1;
        for (int64_t kh = 0; kh < p.k[0]; ++kh) {
          int64_t ih = h0 + kh * p.dil[0];
          if (ih < 0 || ih >= p.in_h) continue;
          for (int64_t kw = 0; kw < p.k[1]; ++kw) {
            int64_t iw = w0 + kw * p.dil[1];
            if (iw < 0 || iw >= p.in_w) continue;
            T v = xp[ih * p.in_w + iw];
            if (best_i < 0) best_i = ih * p.in_w + iw;  // a window of -inf reports its first
            if (v > best || detail::is_nan(v)) {
              best = v;
              best_i = ih * p.in_w + iw;
            }
          }
        }
        int64_t o = (c * p.out_h + oh) * p.out_w + ow;
        y[o] = best;
        idx[o] = best_i;
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
    if (e == Error::Ok) max_pool(x, out.data_as<T>(), indices.data_as<int64_t>(), p);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
