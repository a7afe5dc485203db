// aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
#include <algorithm>

#include "nn_util.h"

namespace pocket {

// The divisor of one window, as ATen computes it: the window clipped to the padded input
// when count_include_pad, else clipped to the input.
static int64_t window_divisor(int64_t h0, int64_t w0, const detail::Pool2d& p, bool include_pad) {
  int64_t h1 = std::min(h0 + p.k[0], p.in_h + p.pad[0]);
  int64_t w1 = std::min(w0 + p.k[1], p.in_w + p.pad[1]);
  if (include_pad) return (h1 - h0) * (w1 - w0);
  return (std::min(h1, p.in_h) - std::max<int64_t>(h0, 0)) *
         (std::min(w1, p.in_w) - std::max<int64_t>(w0, 0));
}

// x (planes, in_h, in_w) -> y (planes, out_h, out_w); divisor_override 0 means none.
template <typename T>
static void avg_pool(const T* x, T* y, const detail::Pool2d& p, bool include_pad,
                     int64_t divisor_override) {
  for (int64_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * p.in_h * p.in_w;
    for (int64_t oh = 0; oh < p.out_h; ++oh)
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        int64_t h0 = oh * p.stride[0] - p.pad[0], w0 = ow * p.stride[1] - p.pad[1];
        double sum = 0;
        for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h0 + p.k[0], p.in_h); ++ih)
          for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w0 + p.k[1], p.in_w); ++iw)
            sum += xp[ih * p.in_w + iw];
        int64_t div =
            divisor_override != 0 ? divisor_override : window_divisor(h0, w0, p, include_pad);
        // A window wholly inside the padding (possible with ceil_mode) averages to 0.
        y[(c * p.out_h + oh) * p.out_w + ow] =
            div <= 0 ? T(0) : static_cast<T>(sum / static_cast<double>(div));
      }
  }
}

Error op_avg_pool2d(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  bool ceil_mode = args[4]->b, include_pad = args[5]->b;
  int64_t divisor_override = args[6]->is_none() ? 0 : args[6]->i;
  Tensor& out = args[7]->tensor;
  if (!args[6]->is_none() && divisor_override == 0)
    return ctx.fail(Error::InvalidArgument, "avg_pool2d: divisor_override must be non-zero");
  detail::Pool2d p;
  Error e = detail::expect_float_io(ctx, "avg_pool2d", in, out);
  if (e == Error::Ok)
    e = detail::plan_pool2d(ctx, "avg_pool2d", in, args[1]->int_list, args[2]->int_list,
                            args[3]->int_list, nullptr, ceil_mode, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, "avg_pool2d", out, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, "avg_pool2d", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, "avg_pool2d", "input", in, &x);
    if (e == Error::Ok) avg_pool(x, out.data_as<T>(), p, include_pad, divisor_override);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
