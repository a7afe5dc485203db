// pocket::max_pool2d_channels_last(Tensor x, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) -> Tensor
//
// aten::max_pool2d (the values of max_pool2d_with_indices, no indices) of a channels-last
// float32 x (N, H, W, C) -> (N, OH, OW, C): the pooling inside a chain of channels-last
// convolutions (exporter/passes/channels_last.py), so that no transpose surrounds it. Window
// parameters are read and checked as ATen's pooling ops do (plan_pool2d). The padding never
// wins (ATen pads with -inf); a NaN in a window gives NaN, as in ATen. Per output pixel the
// channels are the inner, contiguous loop (vectorized by the compiler); output rows are split
// over the threads.
#include <cmath>

#include "nn_util.h"
#include "parallel_util.h"

namespace pocket {

Error op_max_pool2d_channels_last(KernelContext& ctx, Value** args) {
  const char* op = "max_pool2d_channels_last";
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[6]->tensor;
  Error e = detail::expect_dtype(ctx, op, "x", in, ScalarType::Float32);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "output", out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  if (in.dim != 4) {
    char s[128];
    return ctx.fail(Error::InvalidArgument, "%s: x has shape %s, expected 4-d (N, H, W, C: channels last)", op,
                    shape_string(in.sizes, in.dim, s, sizeof s));
  }
  Tensor nchw = in;  // the shape plan_pool2d reads: (N, C, H, W)
  const int64_t n = in.sizes[0], h = in.sizes[1], w = in.sizes[2], c = in.sizes[3];
  nchw.sizes[1] = c;
  nchw.sizes[2] = h;
  nchw.sizes[3] = w;
  detail::Pool2d p;
  e = detail::plan_pool2d(ctx, op, nchw, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                          &args[4]->int_list, args[5]->b, &p);
  const int64_t sizes[4] = {n, p.out_h, p.out_w, c};
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, sizes, 4);
  const float* x = nullptr;
  if (e == Error::Ok) e = detail::contiguous_data(ctx, op, "x", in, &x);
  if (e != Error::Ok) return e;
  float* y = out.data_as<float>();
  ctx.parallel_for(n * p.out_h, detail::grain_for(p.out_w * c * p.k[0] * p.k[1]), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / p.out_h, oy = r % p.out_h;
      for (int64_t ox = 0; ox < p.out_w; ++ox) {
        float* yp = y + (r * p.out_w + ox) * c;
        for (int64_t j = 0; j < c; ++j) yp[j] = -INFINITY;
        for (int64_t ki = 0; ki < p.k[0]; ++ki) {
          const int64_t iy = oy * p.stride[0] - p.pad[0] + ki * p.dil[0];
          if (iy < 0 || iy >= h) continue;
          for (int64_t kj = 0; kj < p.k[1]; ++kj) {
            const int64_t ix = ox * p.stride[1] - p.pad[1] + kj * p.dil[1];
            if (ix < 0 || ix >= w) continue;
            const float* xp = x + ((b * h + iy) * w + ix) * c;
            for (int64_t j = 0; j < c; ++j) yp[j] = (xp[j] > yp[j] || xp[j] != xp[j]) ? xp[j] : yp[j];
          }
        }
      }
    }
  });
  return Error::Ok;
}

}  // namespace pocket
