// pocket::conv2d_q8(Tensor x, Tensor qweight, Tensor w_scales, Tensor? bias, float x_scale, int x_zero_point, int[] stride, int[] padding, int[] dilation, int groups) -> Tensor
//
// 2d convolution of x (B, Cin, H, W) float32, quantized per tensor to int8 with x_scale and
// x_zero_point, with an int8 weight (Cout, Cin / groups, kh, kw) quantized per output channel
// (w_scales (Cout)): -> (B, Cout, OH, OW) float32. As exporter/quant/ops.py:
//   xq = clamp(round(x / x_scale) + zp, -128, 127) - zp      float32 ops, ties to even
//   acc = Σ xq · w over the window (exact int32; zero padding is 0 in this domain)
//   y = float(acc * (x_scale * w_scale[c])) + bias[c]        product in double
// x is quantized once into temp memory (int16 holds xq - zp); each output channel
// accumulates one int32 plane, one kernel tap at a time along contiguous output rows.
#include <algorithm>

#include "quant_util.h"

namespace pocket {

namespace {

constexpr const char* kOp = "conv2d_q8";
// |xq - zp| <= 255 and |w| <= 128: this many products per output keep int32 exact.
constexpr int64_t kMaxTerms = (int64_t(1) << 31) / (255 * 128) - 1;

struct ConvQ {
  int64_t batch = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t in[2] = {0, 0}, out[2] = {0, 0}, k[2] = {0, 0};  // (height, width)
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  double x_scale = 1;
  int64_t zero_point = 0;
};

// [*lo, *hi): the i in [0, n) with 0 <= i * s + off < len.
void valid_range(int64_t n, int64_t s, int64_t off, int64_t len, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t last = len - 1 - off;
  *hi = last < 0 ? 0 : std::min(n, last / s + 1);
  if (*lo > *hi) *lo = *hi;
}

// acc (out plane) += one input channel x (in plane) convolved with one kernel w (k plane).
void conv_plane(const int16_t* x, const int8_t* w, int32_t* acc, const ConvQ& s) {
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

// xq - zp for all of x, as int16 (see the top of the file; clamping before rounding is the
// same as after, the bounds being integers).
void quantize_input(const float* x, int64_t count, const ConvQ& s, int16_t* xq) {
  const float scale = static_cast<float>(s.x_scale);  // torch divides in the tensor's dtype
  const float lo = static_cast<float>(-128 - s.zero_point), hi = static_cast<float>(127 - s.zero_point);
  for (int64_t i = 0; i < count; ++i)
    xq[i] = static_cast<int16_t>(detail::round_half_even_small(detail::clamp_float(x[i] / scale, lo, hi)));
}

void run(const float* x, const int8_t* w, const float* w_scales, const float* bias, int16_t* xq,
         int32_t* acc, float* y, const ConvQ& s) {
  const int64_t in_plane = s.in[0] * s.in[1], out_plane = s.out[0] * s.out[1];
  const int64_t k_plane = s.k[0] * s.k[1], cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  quantize_input(x, s.batch * s.c_in * in_plane, s, xq);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t oc = 0; oc < s.c_out; ++oc) {
      const int64_t g = oc / cout_g;
      std::fill(acc, acc + out_plane, 0);
      for (int64_t icg = 0; icg < cin_g; ++icg)
        conv_plane(xq + (b * s.c_in + g * cin_g + icg) * in_plane, w + (oc * cin_g + icg) * k_plane, acc, s);
      const double m = s.x_scale * static_cast<double>(w_scales[oc]);
      float* yp = y + (b * s.c_out + oc) * out_plane;
      for (int64_t i = 0; i < out_plane; ++i) yp[i] = static_cast<float>(acc[i] * m);
      if (bias != nullptr)
        for (int64_t i = 0; i < out_plane; ++i) yp[i] += bias[oc];
    }
}

Error check_tensors(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  Error e = detail::expect_dtype(ctx, kOp, "x", x, ScalarType::Float32);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, kOp, "qweight", w, ScalarType::Int8);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, kOp, "output", out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  char a[128], b[128];
  if (x.dim != 4 || w.dim != 4)
    return ctx.fail(Error::InvalidArgument, "%s: x %s and qweight %s must both be 4-d (NCHW, OIHW)", kOp,
                    shape_string(x.sizes, x.dim, a, sizeof a), shape_string(w.sizes, w.dim, b, sizeof b));
  return Error::Ok;
}

Error check_channels(KernelContext& ctx, const Tensor& w, ConvQ* s) {
  const int64_t g = s->groups;
  if (g < 1)
    return ctx.fail(Error::InvalidArgument, "%s: groups is %lld, expected >= 1", kOp, static_cast<long long>(g));
  s->c_out = w.sizes[0];
  if (s->c_in % g != 0 || s->c_out % g != 0 || w.sizes[1] * g != s->c_in)
    return ctx.fail(Error::InvalidArgument,
                    "%s: x has %lld channels and qweight [%lld, %lld, ...]; with groups %lld expected "
                    "both channel counts divisible by groups and qweight.size(1) = %lld",
                    kOp, static_cast<long long>(s->c_in), static_cast<long long>(w.sizes[0]),
                    static_cast<long long>(w.sizes[1]), static_cast<long long>(g),
                    static_cast<long long>(s->c_in / g));
  if (w.sizes[1] * s->k[0] * s->k[1] > kMaxTerms)
    return ctx.fail(Error::InvalidArgument,
                    "%s: %lld products per output (Cin / groups * kh * kw) could overflow the int32 "
                    "accumulator (at most %lld)",
                    kOp, static_cast<long long>(w.sizes[1] * s->k[0] * s->k[1]), static_cast<long long>(kMaxTerms));
  return Error::Ok;
}

Error check_quant_params(KernelContext& ctx, ConvQ* s) {
  const float f = static_cast<float>(s->x_scale);
  if (!(f > 0) || f == INFINITY)
    return ctx.fail(Error::InvalidArgument, "%s: x_scale is %g, expected a positive finite float32", kOp,
                    s->x_scale);
  if (s->zero_point < -128 || s->zero_point > 127)
    return ctx.fail(Error::InvalidArgument, "%s: x_zero_point is %lld, expected -128 to 127", kOp,
                    static_cast<long long>(s->zero_point));
  return Error::Ok;
}

Error parse(KernelContext& ctx, Value** args, ConvQ* s) {
  const Tensor& x = args[0]->tensor;
  const Tensor& w = args[1]->tensor;
  Error e = check_tensors(ctx, x, w, args[10]->tensor);
  if (e != Error::Ok) return e;
  s->batch = x.sizes[0];
  s->c_in = x.sizes[1];
  s->groups = args[9]->i;
  s->x_scale = args[4]->d;
  s->zero_point = args[5]->i;
  for (int a = 0; a < 2; ++a) {
    s->in[a] = x.sizes[2 + a];
    s->k[a] = w.sizes[2 + a];
  }
  e = detail::expand_param(ctx, kOp, "stride", args[6]->int_list, 2, 1, s->stride);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "padding", args[7]->int_list, 2, 0, s->pad);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "dilation", args[8]->int_list, 2, 1, s->dil);
  if (e == Error::Ok) e = check_channels(ctx, w, s);
  if (e == Error::Ok) e = check_quant_params(ctx, s);
  if (e == Error::Ok) e = detail::expect_vector(ctx, kOp, "w_scales", args[2]->tensor, s->c_out, ScalarType::Float32);
  if (e == Error::Ok && !args[3]->is_none())
    e = detail::expect_vector(ctx, kOp, "bias", args[3]->tensor, s->c_out, ScalarType::Float32);
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

}  // namespace

Error op_conv2d_q8(KernelContext& ctx, Value** args) {
  ConvQ s;
  Error e = parse(ctx, args, &s);
  if (e != Error::Ok) return e;
  Tensor& out = args[10]->tensor;
  const int64_t sizes[4] = {s.batch, s.c_out, s.out[0], s.out[1]};
  e = detail::resize_output(ctx, kOp, out, sizes, 4);
  if (e != Error::Ok) return e;
  const float *x = nullptr, *w_scales = nullptr, *bias = nullptr;
  const int8_t* w = nullptr;
  int16_t* xq = nullptr;
  int32_t* acc = nullptr;
  e = detail::contiguous_data(ctx, kOp, "x", args[0]->tensor, &x);
  if (e == Error::Ok) e = detail::contiguous_data(ctx, kOp, "qweight", args[1]->tensor, &w);
  if (e == Error::Ok) e = detail::contiguous_data(ctx, kOp, "w_scales", args[2]->tensor, &w_scales);
  if (e == Error::Ok && !args[3]->is_none()) e = detail::contiguous_data(ctx, kOp, "bias", args[3]->tensor, &bias);
  if (e == Error::Ok) e = detail::temp_array(ctx, kOp, "the quantized input", args[0]->tensor.numel(), &xq);
  if (e == Error::Ok) e = detail::temp_array(ctx, kOp, "an int32 output plane", s.out[0] * s.out[1], &acc);
  if (e != Error::Ok) return e;
  run(x, w, w_scales, bias, xq, acc, out.data_as<float>(), s);
  return Error::Ok;
}

}  // namespace pocket
