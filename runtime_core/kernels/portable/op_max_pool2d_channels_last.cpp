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
#include "parts.h"

namespace pocket {
namespace detail {

Error prepare_max_pool2d_channels_last(KernelContext& ctx, Value** args, MaxPoolChannelsLastArgs* a) {
  const char* op = "max_pool2d_channels_last";
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[6]->tensor;
  Error e = expect_dtype(ctx, op, "x", in, ScalarType::Float32);
  if (e == Error::Ok) e = expect_dtype(ctx, op, "output", out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  if (in.dim != 4) {
    char s[128];
    return ctx.fail(Error::InvalidArgument, "%s: x has shape %s, expected 4-d (N, H, W, C: channels last)", op,
                    shape_string(in.sizes, in.dim, s, sizeof s));
  }
  Tensor nchw = in;  // the shape plan_pool2d reads: (N, C, H, W)
  a->batch = in.sizes[0];
  a->in[0] = in.sizes[1];
  a->in[1] = in.sizes[2];
  a->c = in.sizes[3];
  nchw.sizes[1] = a->c;
  nchw.sizes[2] = a->in[0];
  nchw.sizes[3] = a->in[1];
  Pool2d p;
  e = plan_pool2d(ctx, op, nchw, args[1]->int_list, args[2]->int_list, args[3]->int_list, &args[4]->int_list,
                  args[5]->b, &p);
  const int64_t sizes[4] = {a->batch, p.out_h, p.out_w, a->c};
  if (e == Error::Ok) e = resize_output(ctx, op, out, sizes, 4);
  if (e == Error::Ok) e = contiguous_data(ctx, op, "x", in, &a->x);
  if (e != Error::Ok) return e;
  a->out[0] = p.out_h;
  a->out[1] = p.out_w;
  for (int d = 0; d < 2; ++d) {
    a->k[d] = p.k[d];
    a->stride[d] = p.stride[d];
    a->pad[d] = p.pad[d];
    a->dil[d] = p.dil[d];
  }
  a->y = out.data_as<float>();
  return Error::Ok;
}

void max_pool2d_channels_last_portable(KernelContext& ctx, const MaxPoolChannelsLastArgs& a) {
  const int64_t h = a.in[0], w = a.in[1], c = a.c;
  ctx.parallel_for(a.batch * a.out[0], grain_for(a.out[1] * c * a.k[0] * a.k[1]), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / a.out[0], oy = r % a.out[0];
      for (int64_t ox = 0; ox < a.out[1]; ++ox) {
        float* yp = a.y + (r * a.out[1] + ox) * c;
        for (int64_t j = 0; j < c; ++j) yp[j] = -INFINITY;
        for (int64_t ki = 0; ki < a.k[0]; ++ki) {
          const int64_t iy = oy * a.stride[0] - a.pad[0] + ki * a.dil[0];
          if (iy < 0 || iy >= h) continue;
          for (int64_t kj = 0; kj < a.k[1]; ++kj) {
            const int64_t ix = ox * a.stride[1] - a.pad[1] + kj * a.dil[1];
            if (ix < 0 || ix >= w) continue;
            const float* xp = a.x + ((b * h + iy) * w + ix) * c;
            for (int64_t j = 0; j < c; ++j) yp[j] = (xp[j] > yp[j] || xp[j] != xp[j]) ? xp[j] : yp[j];
          }
        }
      }
    }
  });
}

}  // namespace detail

Error op_max_pool2d_channels_last(KernelContext& ctx, Value** args) {
  detail::MaxPoolChannelsLastArgs a;
  Error e = detail::prepare_max_pool2d_channels_last(ctx, args, &a);
  if (e != Error::Ok) return e;
  detail::max_pool2d_channels_last_portable(ctx, a);
  return Error::Ok;
}

}  // namespace pocket
