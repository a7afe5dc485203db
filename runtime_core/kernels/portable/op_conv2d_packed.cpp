// pocket::conv2d_packed(Tensor x, Tensor weight, Tensor? bias, Tensor? residual, int out_channels, int[] stride, int[] padding, int[] dilation, int groups, float? out_min, float? out_max) -> Tensor
// pocket::conv2d_winograd(the same arguments) -> Tensor
// pocket::conv2d_packed.act, conv2d_winograd.act(the same arguments, str activation) -> Tensor
//
// 2d convolution of channels-last float32 tensors with the weight stored in the optimized
// kernels' layout (parts.h, ConvPackedArgs): x (B, H, W, Cin) -> y (B, OH, OW, Cout) =
// clamp(conv(x, w) + bias + residual, out_min, out_max), then for the .act overloads the
// activation (sigmoid, silu, hardsigmoid or hardswish). groups is 1 or, depthwise, equal to
// Cin and Cout. The exporter (passes/channels_last.py) writes it for the convolutions of a
// channels-last chain. This kernel is the reference the optimized one (kernels/optimized/
// conv_packed.cpp) is tested against: plain loops over output rows, split over the threads.
#include <algorithm>
#include <cstring>

#include "parallel_util.h"
#include "parts.h"

namespace pocket {
namespace detail {

namespace {

const char* op_name(const ConvPackedArgs& a) { return a.winograd ? "conv2d_winograd" : "conv2d_packed"; }

Error read_bound(KernelContext& ctx, const ConvPackedArgs* a, const Value& v, const char* name, float none,
                 float* out) {
  *out = none;
  if (v.is_none()) return Error::Ok;
  if (std::isnan(v.d))
    return ctx.fail(Error::InvalidArgument, "%s: %s is NaN, expected a number or None", op_name(*a), name);
  *out = static_cast<float>(v.d);
  return Error::Ok;
}

// Channels, groups and the weight's shape (its layout follows from groups).
Error check_weight(KernelContext& ctx, const Tensor& w, ConvPackedArgs* a) {
  const char* const kOp = op_name(*a);
  char s1[128], s2[128];
  if (a->winograd && a->groups != 1)
    return ctx.fail(Error::InvalidArgument, "%s: groups is %lld, expected 1 (Winograd F(2x2, 3x3))", kOp,
                    static_cast<long long>(a->groups));
  if (a->c_out < 1)
    return ctx.fail(Error::InvalidArgument, "%s: out_channels is %lld, expected >= 1", kOp,
                    static_cast<long long>(a->c_out));
  if (a->groups != 1 && !(a->groups == a->c_in && a->groups == a->c_out))
    return ctx.fail(Error::InvalidArgument,
                    "%s: groups is %lld with %lld input and %lld output channels; expected 1 or (depthwise) "
                    "groups = input channels = output channels",
                    kOp, static_cast<long long>(a->groups), static_cast<long long>(a->c_in),
                    static_cast<long long>(a->c_out));
  const bool dw = a->depthwise();
  if (w.dim != (dw ? 3 : 5))
    return ctx.fail(Error::InvalidArgument, "%s: weight has shape %s, expected %s", kOp,
                    shape_string(w.sizes, w.dim, s1, sizeof s1),
                    dw ? "3-d (k_h, k_w, channels) for a depthwise convolution"
                       : "5-d (blocks, k_h, k_w, in channels, 16) for groups 1");
  a->k[0] = a->winograd ? 3 : w.sizes[dw ? 0 : 1];
  a->k[1] = a->winograd ? 3 : w.sizes[dw ? 1 : 2];
  int64_t want[5] = {a->blocks(), a->k[0], a->k[1], a->c_in, kConvPackLanes};
  if (a->winograd) want[1] = want[2] = 4;  // the 3x3 kernel transformed: 4x4 terms
  if (dw) {
    want[0] = a->k[0];
    want[1] = a->k[1];
    want[2] = a->c_in;
  }
  for (int d = 0; d < w.dim; ++d)
    if (w.sizes[d] != want[d] || want[d] < 1)
      return ctx.fail(Error::InvalidArgument,
                      "%s: weight has shape %s, expected %s for %lld input and %lld output channels, groups %lld",
                      kOp, shape_string(w.sizes, w.dim, s1, sizeof s1), shape_string(want, w.dim, s2, sizeof s2),
                      static_cast<long long>(a->c_in), static_cast<long long>(a->c_out),
                      static_cast<long long>(a->groups));
  return Error::Ok;
}

Error read_activation(KernelContext& ctx, const ConvPackedArgs& a, const Value& v, ConvActivation* act) {
  static constexpr struct {
    const char* name;
    ConvActivation act;
  } kNames[] = {{"sigmoid", ConvActivation::Sigmoid},
                {"silu", ConvActivation::Silu},
                {"hardsigmoid", ConvActivation::Hardsigmoid},
                {"hardswish", ConvActivation::Hardswish}};
  for (const auto& n : kNames)
    if (v.str.size == std::strlen(n.name) && std::memcmp(v.str.data, n.name, v.str.size) == 0) {
      *act = n.act;
      return Error::Ok;
    }
  return ctx.fail(Error::InvalidArgument,
                  "%s.act: activation is '%.*s', expected sigmoid, silu, hardsigmoid or hardswish", op_name(a),
                  static_cast<int>(std::min<size_t>(v.str.size, 64)), v.str.data);
}

// out: the output's index in args (after the .act overload's activation name).
Error parse(KernelContext& ctx, Value** args, int out, ConvPackedArgs* a) {
  const char* const kOp = op_name(*a);
  const Tensor& x = args[0]->tensor;
  const Tensor& w = args[1]->tensor;
  Error e = expect_dtype(ctx, kOp, "x", x, ScalarType::Float32);
  if (e == Error::Ok) e = expect_dtype(ctx, kOp, "weight", w, ScalarType::Float32);
  if (e == Error::Ok) e = expect_dtype(ctx, kOp, "output", args[out]->tensor, ScalarType::Float32);
  if (e == Error::Ok && out == 12) e = read_activation(ctx, *a, *args[11], &a->act);
  if (e != Error::Ok) return e;
  if (x.dim != 4) {
    char s[128];
    return ctx.fail(Error::InvalidArgument, "%s: x has shape %s, expected 4-d (N, H, W, C: channels last)", kOp,
                    shape_string(x.sizes, x.dim, s, sizeof s));
  }
  a->batch = x.sizes[0];
  a->in[0] = x.sizes[1];
  a->in[1] = x.sizes[2];
  a->c_in = x.sizes[3];
  a->c_out = args[4]->i;
  a->groups = args[8]->i;
  e = check_weight(ctx, w, a);
  if (e == Error::Ok) e = expand_param(ctx, kOp, "stride", args[5]->int_list, 2, 1, a->stride);
  if (e == Error::Ok) e = expand_param(ctx, kOp, "padding", args[6]->int_list, 2, 0, a->pad);
  if (e == Error::Ok) e = expand_param(ctx, kOp, "dilation", args[7]->int_list, 2, 1, a->dil);
  if (e == Error::Ok) e = read_bound(ctx, a, *args[9], "out_min", -INFINITY, &a->out_min);
  if (e == Error::Ok) e = read_bound(ctx, a, *args[10], "out_max", INFINITY, &a->out_max);
  if (e == Error::Ok && !args[2]->is_none())
    e = expect_vector(ctx, kOp, "bias", args[2]->tensor, a->c_out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  if (a->winograd && (a->stride[0] != 1 || a->stride[1] != 1 || a->dil[0] != 1 || a->dil[1] != 1))
    return ctx.fail(Error::InvalidArgument,
                    "%s: stride (%lld, %lld), dilation (%lld, %lld): Winograd F(2x2, 3x3) runs stride 1, dilation 1 "
                    "only",
                    kOp, static_cast<long long>(a->stride[0]), static_cast<long long>(a->stride[1]),
                    static_cast<long long>(a->dil[0]), static_cast<long long>(a->dil[1]));
  for (int d = 0; d < 2; ++d) {
    const int64_t span = a->dil[d] * (a->k[d] - 1) + 1, padded = a->in[d] + 2 * a->pad[d];
    a->out[d] = padded < span ? 0 : (padded - span) / a->stride[d] + 1;
    if (a->out[d] < 1)
      return ctx.fail(Error::InvalidArgument,
                      "%s: %s: input size %lld, kernel size %lld, padding %lld, dilation %lld give an empty output",
                      kOp, d == 0 ? "height" : "width", static_cast<long long>(a->in[d]),
                      static_cast<long long>(a->k[d]), static_cast<long long>(a->pad[d]),
                      static_cast<long long>(a->dil[d]));
  }
  return Error::Ok;
}

// Output row oy of batch item n (all columns and channels).
void dense_row(const ConvPackedArgs& a, int64_t n, int64_t oy, float* y) {
  constexpr int64_t L = kConvPackLanes;
  const int64_t panel = a.taps() * a.c_in * L;
  for (int64_t ox = 0; ox < a.out[1]; ++ox)
    for (int64_t b = 0; b < a.blocks(); ++b) {
      float acc[L] = {};
      for (int64_t i = 0; i < a.k[0]; ++i) {
        const int64_t iy = oy * a.stride[0] - a.pad[0] + i * a.dil[0];
        if (iy < 0 || iy >= a.in[0]) continue;
        for (int64_t j = 0; j < a.k[1]; ++j) {
          const int64_t ix = ox * a.stride[1] - a.pad[1] + j * a.dil[1];
          if (ix < 0 || ix >= a.in[1]) continue;
          const float* xp = a.x + ((n * a.in[0] + iy) * a.in[1] + ix) * a.c_in;
          const float* wp = a.w + b * panel + (i * a.k[1] + j) * a.c_in * L;
          for (int64_t c = 0; c < a.c_in; ++c)
            for (int64_t l = 0; l < L; ++l) acc[l] += xp[c] * wp[c * L + l];
        }
      }
      const int64_t c0 = b * L, nc = std::min(L, a.c_out - c0);
      for (int64_t l = 0; l < nc; ++l) y[ox * a.c_out + c0 + l] = acc[l];
    }
}

void depthwise_row(const ConvPackedArgs& a, int64_t n, int64_t oy, float* y) {
  const int64_t c_n = a.c_in;
  for (int64_t ox = 0; ox < a.out[1]; ++ox) {
    float* yp = y + ox * c_n;
    std::fill(yp, yp + c_n, 0.0f);
    for (int64_t i = 0; i < a.k[0]; ++i) {
      const int64_t iy = oy * a.stride[0] - a.pad[0] + i * a.dil[0];
      if (iy < 0 || iy >= a.in[0]) continue;
      for (int64_t j = 0; j < a.k[1]; ++j) {
        const int64_t ix = ox * a.stride[1] - a.pad[1] + j * a.dil[1];
        if (ix < 0 || ix >= a.in[1]) continue;
        const float* xp = a.x + ((n * a.in[0] + iy) * a.in[1] + ix) * c_n;
        const float* wp = a.w + (i * a.k[1] + j) * c_n;
        for (int64_t c = 0; c < c_n; ++c) yp[c] += xp[c] * wp[c];
      }
    }
  }
}

}  // namespace

Error prepare_conv2d_packed(KernelContext& ctx, Value** args, ConvPackedArgs* a, bool winograd, bool activation) {
  a->winograd = winograd;
  const char* const kOp = op_name(*a);
  const int out_index = activation ? 12 : 11;
  Error e = parse(ctx, args, out_index, a);
  if (e != Error::Ok) return e;
  Tensor& out = args[out_index]->tensor;
  const int64_t sizes[4] = {a->batch, a->out[0], a->out[1], a->c_out};
  if (!args[3]->is_none()) {
    const Tensor& r = args[3]->tensor;
    e = expect_dtype(ctx, kOp, "residual", r, ScalarType::Float32);
    if (e != Error::Ok) return e;
    bool same = r.dim == 4;
    for (int d = 0; same && d < 4; ++d) same = r.sizes[d] == sizes[d];
    if (!same) {
      char s1[128], s2[128];
      return ctx.fail(Error::InvalidArgument, "%s: residual has shape %s, expected the output's %s", kOp,
                      shape_string(r.sizes, r.dim, s1, sizeof s1), shape_string(sizes, 4, s2, sizeof s2));
    }
  }
  e = resize_output(ctx, kOp, out, sizes, 4);
  if (e == Error::Ok) e = contiguous_data(ctx, kOp, "x", args[0]->tensor, &a->x);
  if (e == Error::Ok) e = contiguous_data(ctx, kOp, "weight", args[1]->tensor, &a->w);
  if (e == Error::Ok && !args[2]->is_none()) e = contiguous_data(ctx, kOp, "bias", args[2]->tensor, &a->bias);
  if (e == Error::Ok && !args[3]->is_none()) e = contiguous_data(ctx, kOp, "residual", args[3]->tensor, &a->res);
  a->y = out.data_as<float>();
  return e;
}

void conv2d_packed_portable(KernelContext& ctx, const ConvPackedArgs& a) {
  const int64_t rows = a.batch * a.out[0], row = a.out[1] * a.c_out;
  const int64_t work = row * a.taps() * (a.depthwise() ? 1 : a.c_in);
  ctx.parallel_for(rows, grain_for(work), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* y = a.y + r * row;
      if (a.depthwise())
        depthwise_row(a, r / a.out[0], r % a.out[0], y);
      else
        dense_row(a, r / a.out[0], r % a.out[0], y);
      for (int64_t i = 0; i < row; ++i) {
        float v = y[i];
        if (a.bias != nullptr) v += a.bias[i % a.c_out];
        if (a.res != nullptr) v += a.res[r * row + i];
        y[i] = conv_activate(a.act, conv_q8_clamp(v, a.out_min, a.out_max));
      }
    }
  });
}

// Winograd F(2x2, 3x3) of output rows 2 ty and 2 ty + 1 (when inside) of batch item n.
void winograd_rows(const ConvPackedArgs& a, int64_t n, int64_t ty) {
  constexpr int64_t L = kConvPackLanes;
  const int64_t cin = a.c_in, panel = 16 * cin * L;
  for (int64_t tx = 0; 2 * tx < a.out[1]; ++tx)
    for (int64_t co = 0; co < a.c_out; ++co) {
      const float* u = a.w + co / L * panel + co % L;  // u[(term · cin + c) · L]
      float m[16] = {};
      for (int64_t c = 0; c < cin; ++c) {
        float d[4][4], q[4][4];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            const int64_t iy = 2 * ty - a.pad[0] + i, ix = 2 * tx - a.pad[1] + j;
            const bool in = iy >= 0 && iy < a.in[0] && ix >= 0 && ix < a.in[1];
            d[i][j] = in ? a.x[((n * a.in[0] + iy) * a.in[1] + ix) * cin + c] : 0.0f;
          }
        for (int j = 0; j < 4; ++j) {  // B^T d
          q[0][j] = d[0][j] - d[2][j];
          q[1][j] = d[1][j] + d[2][j];
          q[2][j] = d[2][j] - d[1][j];
          q[3][j] = d[1][j] - d[3][j];
        }
        for (int i = 0; i < 4; ++i) {  // (B^T d) B, times U
          const float v[4] = {q[i][0] - q[i][2], q[i][1] + q[i][2], q[i][2] - q[i][1], q[i][1] - q[i][3]};
          for (int j = 0; j < 4; ++j) m[i * 4 + j] += v[j] * u[((i * 4 + j) * cin + c) * L];
        }
      }
      for (int i = 0; i < 2; ++i) {  // A^T m A
        const int64_t oy = 2 * ty + i;
        if (oy >= a.out[0]) break;
        float t[4];
        for (int j = 0; j < 4; ++j) t[j] = i == 0 ? m[j] + m[4 + j] + m[8 + j] : m[4 + j] - m[8 + j] - m[12 + j];
        const float o[2] = {t[0] + t[1] + t[2], t[1] - t[2] - t[3]};
        for (int j = 0; j < 2; ++j) {
          const int64_t ox = 2 * tx + j;
          if (ox >= a.out[1]) break;
          const int64_t at = ((n * a.out[0] + oy) * a.out[1] + ox) * a.c_out + co;
          float v = o[j];
          if (a.bias != nullptr) v += a.bias[co];
          if (a.res != nullptr) v += a.res[at];
          a.y[at] = conv_activate(a.act, conv_q8_clamp(v, a.out_min, a.out_max));
        }
      }
    }
}

void conv2d_winograd_portable(KernelContext& ctx, const ConvPackedArgs& a) {
  const int64_t th = (a.out[0] + 1) / 2;
  ctx.parallel_for(a.batch * th, grain_for(2 * a.out[1] * a.c_out * a.c_in * 16), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) winograd_rows(a, r / th, r % th);
  });
}

}  // namespace detail

namespace {

Error conv2d_packed(KernelContext& ctx, Value** args, bool winograd, bool activation) {
  detail::ConvPackedArgs a;
  Error e = detail::prepare_conv2d_packed(ctx, args, &a, winograd, activation);
  if (e != Error::Ok) return e;
  if (winograd)
    detail::conv2d_winograd_portable(ctx, a);
  else
    detail::conv2d_packed_portable(ctx, a);
  return Error::Ok;
}

}  // namespace

Error op_conv2d_packed(KernelContext& ctx, Value** args) { return conv2d_packed(ctx, args, false, false); }
Error op_conv2d_packed_act(KernelContext& ctx, Value** args) { return conv2d_packed(ctx, args, false, true); }
Error op_conv2d_winograd(KernelContext& ctx, Value** args) { return conv2d_packed(ctx, args, true, false); }
Error op_conv2d_winograd_act(KernelContext& ctx, Value** args) { return conv2d_packed(ctx, args, true, true); }

}  // namespace pocket
