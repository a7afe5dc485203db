// aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
//
// Output cell (oh, ow) averages input rows [floor(oh * H / OH), ceil((oh + 1) * H / OH)) and
// the columns likewise.
#include "nn_util.h"

namespace pocket {

// x (planes, h, w) -> y (planes, oh, ow)
template <typename T>
static void adaptive_avg_pool(const T* x, T* y, int64_t planes, int64_t h, int64_t w,
                              int64_t out_h, int64_t out_w) {
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t oh = 0; oh < out_h; ++oh) {
      int64_t h0 = oh * h / out_h, h1 = ((oh + 1) * h + out_h - 1) / out_h;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        int64_t w0 = ow * w / out_w, w1 = ((ow + 1) * w + out_w - 1) / out_w;
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += x[(c * h + ih) * w + iw];
        y[(c * out_h + oh) * out_w + ow] =
            static_cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
}

Error op_adaptive_avg_pool2d(KernelContext& ctx, Value** args) {
  const char* op = "_adaptive_avg_pool2d";
  const Tensor& in = args[0]->tensor;  // (n, c, h, w) or (c, h, w)
  Tensor& out = args[2]->tensor;
  char buf[128];
  int64_t out_hw[2];
  const IntList& size = args[1]->int_list;
  if (size.size != 2)
    return ctx.fail(Error::InvalidArgument, "%s: output_size has %zu items, expected 2", op,
                    size.size);
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = detail::expand_param(ctx, op, "output_size", size, 2, 1, out_hw);
  if (e != Error::Ok) return e;
  if ((in.dim != 3 && in.dim != 4) || in.sizes[in.dim - 1] < 1 || in.sizes[in.dim - 2] < 1)
    return ctx.fail(Error::InvalidArgument,
                    "%s: input has shape %s, expected (C, H, W) or (N, C, H, W) with H, W >= 1", op,
                    shape_string(in.sizes, in.dim, buf, sizeof buf));
  int64_t sizes[4];
  for (int d = 0; d < in.dim - 2; ++d) sizes[d] = in.sizes[d];
  sizes[in.dim - 2] = out_hw[0];
  sizes[in.dim - 1] = out_hw[1];
  e = detail::resize_output(ctx, op, out, sizes, in.dim);
  if (e != Error::Ok) return e;
  int64_t h = in.sizes[in.dim - 2], w = in.sizes[in.dim - 1], planes = in.numel() / (h * w);
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) adaptive_avg_pool(x, out.data_as<T>(), planes, h, w, out_hw[0], out_hw[1]);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
