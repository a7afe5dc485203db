// pocket::conv2d_q8(Tensor x, Tensor qweight, Tensor w_scales, Tensor? bias, float x_scale, int x_zero_point, int[] stride, int[] padding, int[] dilation, int groups) -> Tensor
// pocket::conv2d_q8_packed(Tensor x, Tensor weight, Tensor w_scales, Tensor? bias, float x_scale, int x_zero_point, int[] kernel_size, int[] stride, int[] padding, int[] dilation, int groups, float? out_min, float? out_max) -> Tensor
// pocket::conv2d_q8_channels_last(Tensor x, Tensor weight, Tensor w_scales, Tensor? bias, Tensor? residual, float x_scale, int x_zero_point, int[] kernel_size, int[] stride, int[] padding, int[] dilation, int groups, float? out_min, float? out_max, float? out_scale, int? out_zero_point) -> Tensor
//
// 2d convolution of x (B, Cin, H, W) float32, quantized per tensor to int8 with x_scale and
// x_zero_point, with an int8 weight (Cout, Cin / groups, kh, kw) quantized per output channel
// (w_scales (Cout)): -> (B, Cout, OH, OW) float32. As exporter/quant/ops.py:
//   xq = clamp(round(x / x_scale) + zp, -128, 127) - zp      float32 ops, ties to even
//   acc = Σ xq · w over the window (exact int32; zero padding is 0 in this domain)
//   y = float(acc * (x_scale * w_scale[c])) + bias[c]        product in double
// The packed op's weight layouts are in parts.h (ConvQ8Args); its output is then clamped.
// The channels-last op takes x (B, H, W, Cin) and gives (B, OH, OW, Cout), adding the
// residual (shaped as y, or None) after the bias and before the clamp. Its x may be int8 (the
// stored values xq + zp), and with out_scale and out_zero_point its y is int8: requantized
// from the sums in float32, or with a residual quantized from y (parts.h, ConvQ8Args).
// x is quantized once into temp memory (int16 holds xq - zp); each output channel
// accumulates one int32 plane, one kernel tap at a time along contiguous output rows, the
// planes split over the threads. The optimized kernels (kernels/optimized/conv_q8.cpp) give
// identical results.
#include <algorithm>
#include <cmath>

#include "parallel_util.h"
#include "parts.h"

namespace pocket {
namespace detail {

namespace {

// |xq - zp| <= 255 and |w| <= 128: this many products per output keep int32 exact.
constexpr int64_t kMaxTerms = (int64_t(1) << 31) / (255 * 128) - 1;

// [*lo, *hi): the i in [0, n) with 0 <= i * s + off < len.
void valid_range(int64_t n, int64_t s, int64_t off, int64_t len, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t last = len - 1 - off;
  *hi = last < 0 ? 0 : std::min(n, last / s + 1);
  if (*lo > *hi) *lo = *hi;
}

// acc (out plane) += one input channel x (in plane) convolved with one kernel w (k plane).
void conv_plane(const int16_t* x, const int8_t* w, int32_t* acc, const ConvQ8Args& s) {
  for (int64_t kh = 0; kh < s.k[0]; ++kh)
    for (int64_t kw = 0; kw < s.k[1]; ++kw) {
      const int32_t wv = w[kh * s.k[1] + kw];
      int64_t off[2] = {kh * s.dil[0] - s.pad[0], kw * s.dil[1] - s.pad[1]};
      int64_t lo[2], hi[2];
      for (int a = 0; a < 2; ++a) valid_range(s.out[a], s.stride[a], off[a], s.in[a], &lo[a], &hi[a]);
      const int64_t n = hi[1] - lo[1], sw = s.stride[1];
      if (n <= 0 || wv == 0) continue;
      for (int64_t oh = lo[0]; oh < hi[0]; ++oh) {
        const int16_t* xr = x + (oh * s.stride[0] + off[0]) * s.in[1] + lo[1] * sw + off[1];
        int32_t* ar = acc + oh * s.out[1] + lo[1];
        if (sw == 1)
          for (int64_t j = 0; j < n; ++j) ar[j] += wv * xr[j];
        else
          for (int64_t j = 0; j < n; ++j) ar[j] += wv * xr[j * sw];
      }
    }
}

// Output planes [p0, p1) (plane = batch item * c_out + output channel) from xq.
// vals (out plane): the float outputs of a plane before an int8 y's requantization.
void run_planes(const ConvQ8Args& s, const int8_t* w, const int16_t* xq, int32_t* acc, float* vals, int64_t p0,
                int64_t p1) {
  const int64_t in_plane = s.in_plane(), out_plane = s.out_plane(), k_plane = s.k_plane();
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  for (int64_t plane = p0; plane < p1; ++plane) {
    const int64_t b = plane / s.c_out, oc = plane % s.c_out, g = oc / cout_g;
    std::fill(acc, acc + out_plane, 0);
    for (int64_t icg = 0; icg < cin_g; ++icg)
      conv_plane(xq + (b * s.c_in + g * cin_g + icg) * in_plane, w + (oc * cin_g + icg) * k_plane, acc, s);
    const double m = s.x_scale * static_cast<double>(s.w_scales[oc]);
    // y[i * ys] is position i of this plane's channel (NCHW: contiguous; channels-last: c_out apart)
    const int64_t at = s.channels_last ? b * out_plane * s.c_out + oc : plane * out_plane;
    const int64_t ys = s.channels_last ? s.c_out : 1;
    if (s.y_q8 != nullptr && s.res == nullptr) {
      const float qm = conv_q8_out_mult(s, oc), qb = conv_q8_out_bias(s, oc);
      const float lo = static_cast<float>(s.q_lo - s.out_zero_point), hi = static_cast<float>(s.q_hi - s.out_zero_point);
      for (int64_t i = 0; i < out_plane; ++i)
        s.y_q8[at + i * ys] = conv_q8_requantize_sum(static_cast<float>(acc[i]), qm, qb, lo, hi, s.out_zero_point);
      continue;
    }
    const int64_t vs = s.y_q8 != nullptr ? 1 : ys;  // the float values' stride
    float* yp = s.y_q8 != nullptr ? vals : s.y + at;
    for (int64_t i = 0; i < out_plane; ++i) yp[i * vs] = static_cast<float>(acc[i] * m);
    if (s.bias != nullptr)
      for (int64_t i = 0; i < out_plane; ++i) yp[i * vs] += s.bias[oc];
    if (s.res != nullptr)
      for (int64_t i = 0; i < out_plane; ++i) yp[i * vs] += s.res[at + i * ys];
    if (s.out_min > -INFINITY || s.out_max < INFINITY)
      for (int64_t i = 0; i < out_plane; ++i) yp[i * vs] = conv_q8_clamp(yp[i * vs], s.out_min, s.out_max);
    if (s.y_q8 != nullptr) {
      const float lo = static_cast<float>(-128 - s.out_zero_point), hi = static_cast<float>(127 - s.out_zero_point);
      for (int64_t i = 0; i < out_plane; ++i)
        s.y_q8[at + i * ys] =
            conv_q8_requantize(vals[i], static_cast<float>(s.out_scale), lo, hi, s.out_zero_point);
    }
  }
}

// The packed weight as (c_out, c_in / groups, k_h, k_w).
void unpack(const ConvQ8Args& s, int8_t* w) {
  const int64_t taps = s.k_plane(), cin_g = s.cin_g(), cout_g = s.cout_g(), quads = s.quads();
  for (int64_t oc = 0; oc < s.c_out; ++oc) {
    const int64_t g = oc / cout_g, j = oc % cout_g;
    const int8_t* block = s.w + (g * s.blocks() + j / kConvPackLanes) * taps * quads * kConvPackLanes * kConvPackQuad;
    for (int64_t c = 0; c < cin_g; ++c)
      for (int64_t t = 0; t < taps; ++t)
        w[(oc * cin_g + c) * taps + t] =
            block[((t * quads + c / kConvPackQuad) * kConvPackLanes + j % kConvPackLanes) * kConvPackQuad +
                  c % kConvPackQuad];
  }
}

// Where an op's arguments are (the two ops differ in the weight and kernel_size).
struct Layout {
  int x_scale, stride, padding, dilation, groups, out;
  int kernel_size;  // -1: from the weight's shape (and no out_min / out_max)
  int residual;     // -1: none (and float32 x and y only; else out_scale, out_zero_point follow out_max)
  bool channels_last;
  const char* weight;
  const char* op;
};
constexpr Layout kPlain = {4, 6, 7, 8, 9, 10, -1, -1, false, "qweight", "conv2d_q8"};
constexpr Layout kPacked = {4, 7, 8, 9, 10, 13, 6, -1, false, "weight", "conv2d_q8_packed"};
constexpr Layout kChannelsLast = {5, 8, 9, 10, 11, 16, 7, 4, true, "weight", "conv2d_q8_channels_last"};

Error check_tensors(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& out, const Layout& l,
                    bool int8_out, const char* kOp) {
  Error e = Error::Ok;
  if (l.residual < 0 || x.dtype != ScalarType::Int8) e = expect_dtype(ctx, kOp, "x", x, ScalarType::Float32);
  if (e == Error::Ok) e = expect_dtype(ctx, kOp, l.weight, w, ScalarType::Int8);
  if (e == Error::Ok)
    e = expect_dtype(ctx, kOp, "output", out, int8_out ? ScalarType::Int8 : ScalarType::Float32);
  if (e != Error::Ok) return e;
  char a[128], b[128];
  if (x.dim != 4 || !(w.dim == 4 || (w.dim == 6 && l.kernel_size >= 0)))
    return ctx.fail(Error::InvalidArgument, "%s: x %s and %s %s must be 4-d (%s) and %s", kOp,
                    shape_string(x.sizes, x.dim, a, sizeof a), l.weight, shape_string(w.sizes, w.dim, b, sizeof b),
                    l.channels_last ? "NHWC" : "NCHW",
                    l.kernel_size < 0 ? "4-d (OIHW)" : "6-d (packed) or 4-d (OIHW)");
  return Error::Ok;
}

Error check_channels(KernelContext& ctx, const Tensor& w, const Tensor& w_scales, const Layout& l, ConvQ8Args* s) {
  const char* kOp = s->op;
  const int64_t g = s->groups;
  if (g < 1)
    return ctx.fail(Error::InvalidArgument, "%s: groups is %lld, expected >= 1", kOp, static_cast<long long>(g));
  if (!s->packed) {
    s->c_out = w.sizes[0];
    if (s->c_in % g != 0 || s->c_out % g != 0 || w.sizes[1] * g != s->c_in)
      return ctx.fail(Error::InvalidArgument,
                      "%s: x has %lld channels and qweight [%lld, %lld, ...]; with groups %lld expected "
                      "both channel counts divisible by groups and qweight.size(1) = %lld",
                      kOp, static_cast<long long>(s->c_in), static_cast<long long>(w.sizes[0]),
                      static_cast<long long>(w.sizes[1]), static_cast<long long>(g),
                      static_cast<long long>(s->c_in / g));
    if (l.kernel_size >= 0 && (w.sizes[2] != s->k[0] || w.sizes[3] != s->k[1]))
      return ctx.fail(Error::InvalidArgument, "%s: weight [%lld, %lld, %lld, %lld] does not match kernel_size [%lld, %lld]",
                      kOp, static_cast<long long>(w.sizes[0]), static_cast<long long>(w.sizes[1]),
                      static_cast<long long>(w.sizes[2]), static_cast<long long>(w.sizes[3]),
                      static_cast<long long>(s->k[0]), static_cast<long long>(s->k[1]));
  } else {
    s->c_out = w_scales.dim == 1 ? w_scales.sizes[0] : 0;
    if (s->c_in % g != 0 || s->c_out % g != 0 || s->c_out == 0)
      return ctx.fail(Error::InvalidArgument,
                      "%s: x has %lld channels and w_scales %lld values; with groups %lld expected both "
                      "divisible by groups (and w_scales 1-d, not empty)",
                      kOp, static_cast<long long>(s->c_in), static_cast<long long>(s->c_out),
                      static_cast<long long>(g));
    const int64_t want[6] = {g, s->blocks(), s->k_plane(), s->quads(), kConvPackLanes, kConvPackQuad};
    for (int d = 0; d < 6; ++d)
      if (w.sizes[d] != want[d]) {
        char a[128], b[128];
        return ctx.fail(Error::InvalidArgument,
                        "%s: weight has shape %s, expected %s for %lld input and %lld output channels, "
                        "groups %lld and a %lldx%lld kernel",
                        kOp, shape_string(w.sizes, w.dim, a, sizeof a), shape_string(want, 6, b, sizeof b),
                        static_cast<long long>(s->c_in), static_cast<long long>(s->c_out),
                        static_cast<long long>(g), static_cast<long long>(s->k[0]), static_cast<long long>(s->k[1]));
      }
  }
  if (s->cin_g() * s->k_plane() > kMaxTerms)
    return ctx.fail(Error::InvalidArgument,
                    "%s: %lld products per output (Cin / groups * kh * kw) could overflow the int32 "
                    "accumulator (at most %lld)",
                    kOp, static_cast<long long>(s->cin_g() * s->k_plane()), static_cast<long long>(kMaxTerms));
  return Error::Ok;
}

// A tensor's per-tensor scale (a positive finite float32) and zero point (-128 to 127).
Error check_quant_params(KernelContext& ctx, const char* kOp, const char* name, double scale, int64_t zero_point) {
  const float f = static_cast<float>(scale);
  if (!(f > 0) || f == INFINITY)
    return ctx.fail(Error::InvalidArgument, "%s: %s_scale is %g, expected a positive finite float32", kOp, name,
                    scale);
  if (zero_point < -128 || zero_point > 127)
    return ctx.fail(Error::InvalidArgument, "%s: %s_zero_point is %lld, expected -128 to 127", kOp, name,
                    static_cast<long long>(zero_point));
  return Error::Ok;
}

// The channels-last op's out_scale and out_zero_point: both None (float32 y) or both given.
Error read_out_quant(KernelContext& ctx, const char* kOp, const Value& scale, const Value& zero_point,
                     bool* int8_out) {
  *int8_out = !scale.is_none();
  if (scale.is_none() != zero_point.is_none())
    return ctx.fail(Error::InvalidArgument,
                    "%s: out_scale is %s and out_zero_point %s; expected both (an int8 output) or neither", kOp,
                    scale.is_none() ? "None" : "given", zero_point.is_none() ? "None" : "given");
  return *int8_out ? check_quant_params(ctx, kOp, "out", scale.d, zero_point.i) : Error::Ok;
}

// out_min / out_max (None: unbounded).
Error read_bound(KernelContext& ctx, const char* kOp, const Value& v, const char* name, float none, float* out) {
  *out = none;
  if (v.is_none()) return Error::Ok;
  if (std::isnan(v.d))
    return ctx.fail(Error::InvalidArgument, "%s: %s is NaN, expected a number or None", kOp, name);
  *out = static_cast<float>(v.d);
  return Error::Ok;
}

Error parse(KernelContext& ctx, Value** args, const Layout& l, ConvQ8Args* s) {
  const char* kOp = s->op = l.op;
  const Tensor& x = args[0]->tensor;
  const Tensor& w = args[1]->tensor;
  bool int8_out = false;
  Error e = Error::Ok;
  if (l.residual >= 0) e = read_out_quant(ctx, kOp, *args[l.groups + 3], *args[l.groups + 4], &int8_out);
  if (e == Error::Ok) e = check_tensors(ctx, x, w, args[l.out]->tensor, l, int8_out, kOp);
  if (e != Error::Ok) return e;
  if (int8_out) {
    s->out_scale = args[l.groups + 3]->d;
    s->out_zero_point = static_cast<int32_t>(args[l.groups + 4]->i);
    // out_min / out_max quantized: round (ties to even), + zp, within int8
    auto bound = [&](const Value& v, int32_t none) {
      if (v.is_none()) return none;
      const double q = std::nearbyint(v.d / s->out_scale) + s->out_zero_point;
      return static_cast<int32_t>(std::min(127.0, std::max(-128.0, q)));
    };
    s->q_lo = bound(*args[l.groups + 1], -128);
    s->q_hi = bound(*args[l.groups + 2], 127);
  }
  s->channels_last = l.channels_last;
  s->batch = x.sizes[0];
  s->c_in = x.sizes[l.channels_last ? 3 : 1];
  s->groups = args[l.groups]->i;
  s->x_scale = args[l.x_scale]->d;
  s->zero_point = args[l.x_scale + 1]->i;
  s->packed = w.dim == 6;
  for (int a = 0; a < 2; ++a) {
    s->in[a] = x.sizes[l.channels_last ? 1 + a : 2 + a];
    s->k[a] = w.sizes[2 + a];
  }
  if (l.kernel_size >= 0) {
    e = expand_param(ctx, kOp, "kernel_size", args[l.kernel_size]->int_list, 2, 1, s->k);
    if (e == Error::Ok) e = read_bound(ctx, kOp, *args[l.groups + 1], "out_min", -INFINITY, &s->out_min);
    if (e == Error::Ok) e = read_bound(ctx, kOp, *args[l.groups + 2], "out_max", INFINITY, &s->out_max);
    if (e != Error::Ok) return e;
  }
  e = expand_param(ctx, kOp, "stride", args[l.stride]->int_list, 2, 1, s->stride);
  if (e == Error::Ok) e = expand_param(ctx, kOp, "padding", args[l.padding]->int_list, 2, 0, s->pad);
  if (e == Error::Ok) e = expand_param(ctx, kOp, "dilation", args[l.dilation]->int_list, 2, 1, s->dil);
  if (e == Error::Ok) e = check_channels(ctx, w, args[2]->tensor, l, s);
  if (e == Error::Ok) e = check_quant_params(ctx, kOp, "x", s->x_scale, s->zero_point);
  if (e == Error::Ok) e = expect_vector(ctx, kOp, "w_scales", args[2]->tensor, s->c_out, ScalarType::Float32);
  if (e == Error::Ok && !args[3]->is_none())
    e = expect_vector(ctx, kOp, "bias", args[3]->tensor, s->c_out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  for (int a = 0; a < 2; ++a) {
    const int64_t span = s->dil[a] * (s->k[a] - 1) + 1, padded = s->in[a] + 2 * s->pad[a];
    s->out[a] = padded < span ? 0 : (padded - span) / s->stride[a] + 1;
    if (s->out[a] < 1 || s->k[a] < 1)
      return ctx.fail(Error::InvalidArgument,
                      "%s: %s: input size %lld, kernel size %lld, padding %lld, dilation %lld give an empty output",
                      kOp, a == 0 ? "height" : "width", static_cast<long long>(s->in[a]),
                      static_cast<long long>(s->k[a]), static_cast<long long>(s->pad[a]),
                      static_cast<long long>(s->dil[a]));
  }
  return Error::Ok;
}

Error prepare(KernelContext& ctx, Value** args, const Layout& l, ConvQ8Args* s) {
  Error e = parse(ctx, args, l, s);
  if (e != Error::Ok) return e;
  const char* kOp = s->op;
  Tensor& out = args[l.out]->tensor;
  const int64_t nchw[4] = {s->batch, s->c_out, s->out[0], s->out[1]};
  const int64_t nhwc[4] = {s->batch, s->out[0], s->out[1], s->c_out};
  const int64_t* sizes = l.channels_last ? nhwc : nchw;
  if (l.residual >= 0 && !args[l.residual]->is_none()) {
    const Tensor& r = args[l.residual]->tensor;
    e = expect_dtype(ctx, kOp, "residual", r, ScalarType::Float32);
    if (e != Error::Ok) return e;
    if (r.dim != 4 || !std::equal(sizes, sizes + 4, r.sizes)) {
      char a[128], b[128];
      return ctx.fail(Error::InvalidArgument, "%s: residual has shape %s, expected the output's %s", kOp,
                      shape_string(r.sizes, r.dim, a, sizeof a), shape_string(sizes, 4, b, sizeof b));
    }
    e = contiguous_data(ctx, kOp, "residual", r, &s->res);
    if (e != Error::Ok) return e;
  }
  e = resize_output(ctx, kOp, out, sizes, 4);
  if (e == Error::Ok && args[0]->tensor.dtype == ScalarType::Int8)
    e = contiguous_data(ctx, kOp, "x", args[0]->tensor, &s->x_q8);
  else if (e == Error::Ok)
    e = contiguous_data(ctx, kOp, "x", args[0]->tensor, &s->x);
  if (e == Error::Ok) e = contiguous_data(ctx, kOp, l.weight, args[1]->tensor, &s->w);
  if (e == Error::Ok) e = contiguous_data(ctx, kOp, "w_scales", args[2]->tensor, &s->w_scales);
  if (e == Error::Ok && !args[3]->is_none()) e = contiguous_data(ctx, kOp, "bias", args[3]->tensor, &s->bias);
  if (out.dtype == ScalarType::Int8)
    s->y_q8 = out.data_as<int8_t>();
  else
    s->y = out.data_as<float>();
  return e;
}

}  // namespace

Error prepare_conv2d_q8(KernelContext& ctx, Value** args, ConvQ8Args* s) { return prepare(ctx, args, kPlain, s); }

Error prepare_conv2d_q8_packed(KernelContext& ctx, Value** args, ConvQ8Args* s) {
  return prepare(ctx, args, kPacked, s);
}

Error prepare_conv2d_q8_channels_last(KernelContext& ctx, Value** args, ConvQ8Args* s) {
  return prepare(ctx, args, kChannelsLast, s);
}

Error conv2d_q8_portable(KernelContext& ctx, const ConvQ8Args& s) {
  const char* kOp = s.op;
  const int64_t count = s.batch * s.c_in * s.in_plane(), planes = s.batch * s.c_out;
  const int64_t slices = slice_count(ctx, planes, (s.c_in / s.groups) * s.k_plane() * s.out_plane());
  int16_t* xq = nullptr;
  int32_t* acc = nullptr;
  float* vals = nullptr;
  int8_t* w = nullptr;
  Error e = temp_array(ctx, kOp, "the quantized input", count, &xq);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "int32 output planes", slices * s.out_plane(), &acc);
  if (e == Error::Ok && s.y_q8 != nullptr) e = temp_array(ctx, kOp, "output planes", slices * s.out_plane(), &vals);
  if (e == Error::Ok && s.packed) e = temp_array(ctx, kOp, "the unpacked weight", s.c_out * s.cin_g() * s.k_plane(), &w);
  if (e != Error::Ok) return e;
  if (s.packed)
    unpack(s, w);
  else
    w = const_cast<int8_t*>(s.w);
  const float scale = static_cast<float>(s.x_scale);  // torch divides in the tensor's dtype
  const float lo = static_cast<float>(-128 - s.zero_point), hi = static_cast<float>(127 - s.zero_point);
  // xq is NCHW for both layouts: a channels-last x is read transposed
  const int64_t in_plane = s.in_plane();
  ctx.parallel_for(count, grain_for(4), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t at = s.channels_last ? (i / s.c_in / in_plane * in_plane + i % in_plane) * s.c_in +
                                               i / in_plane % s.c_in
                                         : i;
      xq[i] = static_cast<int16_t>(s.x_q8 != nullptr ? s.x_q8[at] - s.zero_point
                                                     : conv_q8_quantize(s.x[at], scale, lo, hi));
    }
  });
  parallel_slices(ctx, planes, slices, [&](int64_t sl, int64_t p0, int64_t p1) {
    run_planes(s, w, xq, acc + sl * s.out_plane(), vals != nullptr ? vals + sl * s.out_plane() : nullptr, p0, p1);
  });
  return Error::Ok;
}

}  // namespace detail

Error op_conv2d_q8(KernelContext& ctx, Value** args) {
  detail::ConvQ8Args s;
  Error e = detail::prepare_conv2d_q8(ctx, args, &s);
  return e != Error::Ok ? e : detail::conv2d_q8_portable(ctx, s);
}

Error op_conv2d_q8_packed(KernelContext& ctx, Value** args) {
  detail::ConvQ8Args s;
  Error e = detail::prepare_conv2d_q8_packed(ctx, args, &s);
  return e != Error::Ok ? e : detail::conv2d_q8_portable(ctx, s);
}

Error op_conv2d_q8_channels_last(KernelContext& ctx, Value** args) {
  detail::ConvQ8Args s;
  Error e = detail::prepare_conv2d_q8_channels_last(ctx, args, &s);
  return e != Error::Ok ? e : detail::conv2d_q8_portable(ctx, s);
}

}  // namespace pocket
