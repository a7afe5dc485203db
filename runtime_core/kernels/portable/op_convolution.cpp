// aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
//
// Direct convolution, 1d, 2d and 3d, grouped (incl. depthwise) and transposed. Every case is
// computed as 3d, a missing spatial dim having size 1. One input channel's contribution to
// one output channel is a sum over kernel taps of (weight tap) × (shifted input rows), added
// to output rows; the innermost loop runs over contiguous output (and, at stride 1, input)
// elements.
#include <algorithm>
#include <cmath>

#include "parallel_util.h"
#include "parts.h"

namespace pocket {

namespace {

using detail::ConvShape;

// [*lo, *hi): the i in [0, n) with 0 <= i * s + off < len.
void valid_range(int64_t n, int64_t s, int64_t off, int64_t len, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t last = len - 1 - off;
  *hi = last < 0 ? 0 : std::min(n, last / s + 1);
  if (*lo > *hi) *lo = *hi;
}

// Adds one input channel (x: in plane) convolved with one kernel (w: k plane) to y (out plane).
template <typename T>
void conv_plane(const T* x, const T* w, T* y, const ConvShape& s) {
  for (int64_t kd = 0; kd < s.k[0]; ++kd)
    for (int64_t kh = 0; kh < s.k[1]; ++kh)
      for (int64_t kw = 0; kw < s.k[2]; ++kw) {
        T wv = w[(kd * s.k[1] + kh) * s.k[2] + kw];
        int64_t off[3] = {kd * s.dil[0] - s.pad[0], kh * s.dil[1] - s.pad[1],
                          kw * s.dil[2] - s.pad[2]};
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; ++a)
          valid_range(s.out[a], s.stride[a], off[a], s.in[a], &lo[a], &hi[a]);
        int64_t n = hi[2] - lo[2], sw = s.stride[2];
        if (n <= 0) continue;
        for (int64_t od = lo[0]; od < hi[0]; ++od)
          for (int64_t oh = lo[1]; oh < hi[1]; ++oh) {
            int64_t id = od * s.stride[0] + off[0], ih = oh * s.stride[1] + off[1];
            const T* xr = x + (id * s.in[1] + ih) * s.in[2] + lo[2] * sw + off[2];
            T* yr = y + (od * s.out[1] + oh) * s.out[2] + lo[2];
            if (sw == 1)
              for (int64_t j = 0; j < n; ++j) yr[j] += wv * xr[j];
            else
              for (int64_t j = 0; j < n; ++j) yr[j] += wv * xr[j * sw];
          }
      }
}

// Transposed: adds one input channel scattered through one kernel to y (out plane).
template <typename T>
void conv_transposed_plane(const T* x, const T* w, T* y, const ConvShape& s) {
  for (int64_t kd = 0; kd < s.k[0]; ++kd)
    for (int64_t kh = 0; kh < s.k[1]; ++kh)
      for (int64_t kw = 0; kw < s.k[2]; ++kw) {
        T wv = w[(kd * s.k[1] + kh) * s.k[2] + kw];
        int64_t off[3] = {kd * s.dil[0] - s.pad[0], kh * s.dil[1] - s.pad[1],
                          kw * s.dil[2] - s.pad[2]};
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; ++a)
          valid_range(s.in[a], s.stride[a], off[a], s.out[a], &lo[a], &hi[a]);
        int64_t n = hi[2] - lo[2], sw = s.stride[2];
        if (n <= 0) continue;
        for (int64_t id = lo[0]; id < hi[0]; ++id)
          for (int64_t ih = lo[1]; ih < hi[1]; ++ih) {
            int64_t od = id * s.stride[0] + off[0], oh = ih * s.stride[1] + off[1];
            const T* xr = x + (id * s.in[1] + ih) * s.in[2] + lo[2];
            T* yr = y + (od * s.out[1] + oh) * s.out[2] + lo[2] * sw + off[2];
            for (int64_t j = 0; j < n; ++j) yr[j * sw] += wv * xr[j];
          }
      }
}

// Output planes [begin, end) (index n * c_out + oc) of the convolution: x (batch, c_in, in...),
// w (c_out, c_in / groups, k...) or, transposed, (c_in, c_out / groups, k...), b (c_out) or
// null -> y (batch, c_out, out...)
template <typename T>
void run_conv(const T* x, const T* w, const T* b, T* y, const ConvShape& s, int64_t begin, int64_t end) {
  int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  int64_t in_plane = s.in_plane(), out_plane = s.out_plane(), k_plane = s.k_plane();
  for (int64_t plane = begin; plane < end; ++plane) {
    const int64_t n = plane / s.c_out, oc = plane % s.c_out, g = oc / cout_g;
    T* yp = y + plane * out_plane;
    std::fill(yp, yp + out_plane, b != nullptr ? b[oc] : T(0));
    for (int64_t icg = 0; icg < cin_g; ++icg) {
      const T* xp = x + (n * s.c_in + g * cin_g + icg) * in_plane;
      if (s.transposed)
        conv_transposed_plane(xp, w + ((g * cin_g + icg) * cout_g + oc - g * cout_g) * k_plane, yp, s);
      else
        conv_plane(xp, w + (oc * cin_g + icg) * k_plane, yp, s);
    }
  }
}

// Reads stride, padding, dilation and output_padding (args 3, 4, 5, 7) into the last
// `spatial` of the 3 slots.
Error read_params(KernelContext& ctx, Value** args, int spatial, ConvShape* s) {
  int first = 3 - spatial;
  Error e = detail::expand_param(ctx, "convolution", "stride", args[3]->int_list, spatial, 1,
                                 s->stride + first);
  if (e == Error::Ok)
    e = detail::expand_param(ctx, "convolution", "padding", args[4]->int_list, spatial, 0,
                             s->pad + first);
  if (e == Error::Ok)
    e = detail::expand_param(ctx, "convolution", "dilation", args[5]->int_list, spatial, 1,
                             s->dil + first);
  if (e == Error::Ok && s->transposed)
    e = detail::expand_param(ctx, "convolution", "output_padding", args[7]->int_list, spatial, 0,
                             s->out_pad + first);
  return e;
}

// Channel counts: weight (c_out, c_in / groups, ...) or, transposed, (c_in, c_out / groups, ...).
Error check_channels(KernelContext& ctx, const Tensor& weight, ConvShape* s) {
  int64_t g = s->groups;
  if (g < 1)
    return ctx.fail(Error::InvalidArgument, "convolution: groups is %lld, expected >= 1",
                    static_cast<long long>(g));
  if (s->c_in % g != 0)
    return ctx.fail(Error::InvalidArgument,
                    "convolution: input has %lld channels, not divisible by groups %lld",
                    static_cast<long long>(s->c_in), static_cast<long long>(g));
  int64_t w_in = s->transposed ? weight.sizes[0] : weight.sizes[1] * g;
  if (w_in != s->c_in)
    return ctx.fail(Error::InvalidArgument,
                    "convolution: weight has %lld input channels, input has %lld (groups %lld)",
                    static_cast<long long>(w_in), static_cast<long long>(s->c_in),
                    static_cast<long long>(g));
  s->c_out = s->transposed ? weight.sizes[1] * g : weight.sizes[0];
  if (!s->transposed && s->c_out % g != 0)
    return ctx.fail(Error::InvalidArgument,
                    "convolution: weight has %lld output channels, not divisible by groups %lld",
                    static_cast<long long>(s->c_out), static_cast<long long>(g));
  return Error::Ok;
}

// Output extent per spatial slot; fails when the (padded) input is smaller than the kernel.
Error compute_output(KernelContext& ctx, ConvShape* s) {
  for (int a = 0; a < 3; ++a) {
    int64_t span = s->dil[a] * (s->k[a] - 1) + 1;
    if (s->transposed) {
      if (s->out_pad[a] >= std::max(s->stride[a], s->dil[a]))
        return ctx.fail(Error::InvalidArgument,
                        "convolution: output_padding %lld must be smaller than stride or dilation",
                        static_cast<long long>(s->out_pad[a]));
      s->out[a] = (s->in[a] - 1) * s->stride[a] - 2 * s->pad[a] + span + s->out_pad[a];
    } else {
      s->out[a] = s->in[a] + 2 * s->pad[a] < span
                      ? 0
                      : (s->in[a] + 2 * s->pad[a] - span) / s->stride[a] + 1;
    }
    if (s->out[a] < 1 || s->in[a] < 1)
      return ctx.fail(Error::InvalidArgument,
                      "convolution: spatial dim %d: input size %lld, kernel size %lld, padding "
                      "%lld give an empty output",
                      a - 3, static_cast<long long>(s->in[a]), static_cast<long long>(s->k[a]),
                      static_cast<long long>(s->pad[a]));
  }
  return Error::Ok;
}

Error parse_conv(KernelContext& ctx, Value** args, ConvShape* s) {
  const Tensor& in = args[0]->tensor;
  const Tensor& weight = args[1]->tensor;
  char a[128], b[128];
  if (in.dim < 3 || in.dim > 5 || weight.dim != in.dim)
    return ctx.fail(Error::InvalidArgument,
                    "convolution: input %s and weight %s must both be 3-d, 4-d or 5-d (batched 1d, "
                    "2d or 3d convolution)",
                    shape_string(in.sizes, in.dim, a, sizeof a),
                    shape_string(weight.sizes, weight.dim, b, sizeof b));
  int spatial = in.dim - 2;
  s->transposed = args[6]->b;
  s->groups = args[8]->i;
  s->batch = in.sizes[0];
  s->c_in = in.sizes[1];
  for (int i = 0; i < spatial; ++i) {
    s->in[3 - spatial + i] = in.sizes[2 + i];
    s->k[3 - spatial + i] = weight.sizes[2 + i];
  }
  Error e = read_params(ctx, args, spatial, s);
  if (e == Error::Ok) e = check_channels(ctx, weight, s);
  if (e == Error::Ok) e = compute_output(ctx, s);
  if (e == Error::Ok && !args[2]->is_none())
    e = detail::expect_vector(ctx, "convolution", "bias", args[2]->tensor, s->c_out, in.dtype);
  return e;
}

}  // namespace

namespace detail {

Error prepare_conv(KernelContext& ctx, Value** args, ConvArgs* a) {
  const Tensor& in = args[0]->tensor;
  const Tensor& weight = args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : &args[2]->tensor;
  Tensor& out = args[9]->tensor;
  Error e = expect_float_io(ctx, "convolution", in, out);
  if (e == Error::Ok) e = expect_dtype(ctx, "convolution", "weight", weight, in.dtype);
  if (e != Error::Ok) return e;
  ConvShape& s = a->s;
  e = parse_conv(ctx, args, &s);
  if (e != Error::Ok) return e;
  int64_t sizes[5] = {s.batch, s.c_out, s.out[0], s.out[1], s.out[2]};
  int spatial = in.dim - 2;
  for (int i = 0; i < spatial; ++i) sizes[2 + i] = s.out[3 - spatial + i];
  e = resize_output(ctx, "convolution", out, sizes, in.dim);
  if (e != Error::Ok) return e;
  a->dtype = in.dtype;
  a->y = out.data;
  Error dispatched = dispatch_float(ctx, "convolution", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = nullptr, *w = nullptr, *b = nullptr;
    e = contiguous_data(ctx, "convolution", "input", in, &x);
    if (e == Error::Ok) e = contiguous_data(ctx, "convolution", "weight", weight, &w);
    if (e == Error::Ok && bias != nullptr) e = contiguous_data(ctx, "convolution", "bias", *bias, &b);
    a->x = x;
    a->w = w;
    a->b = b;
  });
  return dispatched != Error::Ok ? dispatched : e;
}

void conv_portable(KernelContext& ctx, const ConvArgs& a) {
  const ConvShape& s = a.s;
  // One output plane costs out_plane * k_plane * (c_in / groups) multiply-adds (transposed:
  // in_plane * ...); parallel over all planes of all batch items.
  const int64_t per_plane = (s.transposed ? s.in_plane() : s.out_plane()) * s.k_plane() * (s.c_in / s.groups);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    ctx.parallel_for(s.batch * s.c_out, grain_for(per_plane), [&](int64_t begin, int64_t end) {
      run_conv(static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<const T*>(a.b),
               static_cast<T*>(a.y), s, begin, end);
    });
  };
  if (a.dtype == ScalarType::Float64)
    run(double{});
  else
    run(float{});
}

namespace {

// y = min(max(y, lo), hi) as torch.clamp: a NaN stays (both comparisons are false).
template <typename T>
void clamp_range(T* y, int64_t n, T lo, T hi) {
  for (int64_t i = 0; i < n; ++i) {
    T v = y[i] < lo ? lo : y[i];
    y[i] = v > hi ? hi : v;
  }
}

Error read_bound(KernelContext& ctx, const Value& v, const char* name, double none, double* out) {
  *out = v.is_none() ? none : v.d;
  if (std::isnan(*out))
    return ctx.fail(Error::InvalidArgument, "convolution_clamp: %s is NaN, expected a number or None", name);
  return Error::Ok;
}

}  // namespace

Error convolution_clamp_with(KernelContext& ctx, Value** args, KernelFn conv) {
  double lo = 0, hi = 0;
  Error e = read_bound(ctx, *args[7], "out_min", -INFINITY, &lo);
  if (e == Error::Ok) e = read_bound(ctx, *args[8], "out_max", INFINITY, &hi);
  if (e != Error::Ok) return e;
  // aten::convolution's arguments: transposed false (output_padding is then not read).
  Value transposed;
  transposed.tag = Value::Tag::Bool;
  transposed.b = false;
  Value* conv_args[10] = {args[0], args[1], args[2], args[3], args[4], args[5], &transposed, args[4], args[6], args[9]};
  e = conv(ctx, conv_args);
  if (e != Error::Ok) return e;
  Tensor& out = args[9]->tensor;
  const int64_t n = out.numel();
  ctx.parallel_for(n, grain_for(2), [&](int64_t i0, int64_t i1) {
    if (out.dtype == ScalarType::Float64)
      clamp_range(out.data_as<double>() + i0, i1 - i0, lo, hi);
    else
      clamp_range(out.data_as<float>() + i0, i1 - i0, static_cast<float>(lo), static_cast<float>(hi));
  });
  return Error::Ok;
}

}  // namespace detail

Error op_convolution(KernelContext& ctx, Value** args) {
  detail::ConvArgs a;
  Error e = detail::prepare_conv(ctx, args, &a);
  if (e == Error::Ok) detail::conv_portable(ctx, a);
  return e;
}

Error op_convolution_clamp(KernelContext& ctx, Value** args) {
  return detail::convolution_clamp_with(ctx, args, op_convolution);
}

}  // namespace pocket
