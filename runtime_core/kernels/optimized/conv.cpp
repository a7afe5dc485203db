// Driver of aten::convolution's optimized cases, float32, not transposed:
//   1x1, stride 1, no padding, groups 1: per batch item a product W (c_out, c_in) · X (c_in,
//       h*w) ("nn" GEMM, bias per output row);
//   depthwise 3x3 (groups == c_in == c_out), stride 1 or 2, dilation 1, 2d: one plane per
//       task through the ISA's DwConv3x3Fn.
// Everything else runs the portable convolution (which is parallel over output planes).
#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

bool is_2d(const ConvShape& s) { return s.in[0] == 1 && s.k[0] == 1 && s.out[0] == 1; }

bool is_pointwise(const ConvShape& s) {
  for (int a = 0; a < 3; ++a)
    if (s.k[a] != 1 || s.stride[a] != 1 || s.pad[a] != 0) return false;
  return s.groups == 1;
}

bool is_depthwise3x3(const ConvShape& s) {
  return is_2d(s) && s.groups == s.c_in && s.c_out == s.c_in && s.k[1] == 3 && s.k[2] == 3 &&
         s.stride[1] == s.stride[2] && (s.stride[1] == 1 || s.stride[1] == 2) && s.dil[1] == 1 && s.dil[2] == 1;
}

}  // namespace

Error conv_with(KernelContext& ctx, Value** args, const GemmKernels& g, DwConv3x3Fn dw) {
  ConvArgs a;
  Error e = prepare_conv(ctx, args, &a);
  if (e != Error::Ok) return e;
  const ConvShape& s = a.s;
  if (a.dtype != ScalarType::Float32 || s.transposed) {
    conv_portable(ctx, a);
    return Error::Ok;
  }
  const float* x = static_cast<const float*>(a.x);
  const float* w = static_cast<const float*>(a.w);
  const float* b = static_cast<const float*>(a.b);
  float* y = static_cast<float*>(a.y);
  const int64_t in_plane = s.in_plane(), out_plane = s.out_plane();
  if (is_pointwise(s)) {
    for (int64_t n = 0; n < s.batch; ++n)
      gemm_nn(ctx, g, s.c_out, out_plane, s.c_in, w, s.c_in, 1, x + n * s.c_in * in_plane, in_plane, b,
              y + n * s.c_out * out_plane, out_plane);
    return Error::Ok;
  }
  if (is_depthwise3x3(s)) {
    ctx.parallel_for(s.batch * s.c_out, grain_for(out_plane * 9), [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t c = plane % s.c_out;
        dw(x + plane * in_plane, s.in[1], s.in[2], w + c * 9, b != nullptr ? b[c] : 0.0f, s.stride[1], s.pad[1],
           s.pad[2], y + plane * out_plane, s.out[1], s.out[2]);
      }
    });
    return Error::Ok;
  }
  conv_portable(ctx, a);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
