// Driver of aten::convolution's optimized cases, float32, not transposed:
//   1x1, stride 1, no padding, groups 1: per batch item a product W (c_out, c_in) · X (c_in,
//       h*w) ("nn" GEMM, bias per output row);
//   depthwise 3x3 (groups == c_in == c_out), stride 1 or 2, dilation 1, 2d: one plane per
//       task through the ISA's DwConv3x3Fn;
//   any other 1d, 2d or 3d convolution (stride, padding, dilation, groups) with at least
//       kMinGemmRows output channels per group: im2col, then the "nn" GEMM. For each batch
//       item and group, chunks of output positions: the input taps are copied to a column
//       matrix (K, chunk), K = c_in / groups · kernel taps, which the group's weight
//       (c_out / groups, K) multiplies straight into y (rows out_plane apart). The chunk
//       bounds the temp memory (kColumnBytes per thread). Threads take equal runs of column
//       tiles over all (batch item, group) planes, each copying and multiplying its own;
//       problems too small for that split each chunk's copy and product over the threads.
// Everything else runs the portable convolution (parallel over output planes): depthwise
// with other kernels and groups of fewer channels, where the copy costs as much as the
// product it feeds.
#include <algorithm>

#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

// Output channels per group (rows of the product: the reuse of each copied element) below
// which the copy does not pay. Measured speedup over portable (1 thread, 14x14 and 56x56
// planes, 3x3 to 7x7 kernels): 0.5-0.6 with 1 channel per group, 0.9-1.3 with 2, 1.6-2.5
// with 4.
constexpr int64_t kMinGemmRows = 4;
// Bytes of the column matrix: it stays in L2 between being written and read by the GEMM.
constexpr int64_t kColumnBytes = 512 * 1024;
constexpr int64_t kMinChunk = 64, kMaxChunk = 2048;  // output positions

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

// Rows [r0, r1) of the column matrix of one batch item and group (x: its first input plane)
// for output positions [p0, p0 + cols): row r is tap (ic, kd, kh, kw) in the weight's
// order, column j position p0 + j; zero where the tap falls in the padding. Small planes
// make short rows and runs: no divisions per run, few per row.
void im2col(const float* x, const ConvShape& s, int64_t r0, int64_t r1, int64_t p0, int64_t cols, float* out,
            int64_t ld) {
  const int64_t ow_n = s.out[2], iw_n = s.in[2], sw = s.stride[2];
  const int64_t ow_p0 = p0 % ow_n, oh_p0 = p0 / ow_n % s.out[1], od_p0 = p0 / ow_n / s.out[1];
  const int64_t t0 = r0 % s.k_plane();
  int64_t ic = r0 / s.k_plane(), kd = t0 / (s.k[1] * s.k[2]), kh = t0 / s.k[2] % s.k[1], kw = t0 % s.k[2];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t off_d = kd * s.dil[0] - s.pad[0], off_h = kh * s.dil[1] - s.pad[1], off_w = kw * s.dil[2] - s.pad[2];
    // Output columns [lo, hi) read inside the input row.
    const int64_t lo = off_w >= 0 ? 0 : sw == 1 ? -off_w : (-off_w + sw - 1) / sw;
    const int64_t hi = iw_n - off_w <= 0 ? 0 : std::min(sw == 1 ? iw_n - off_w : (iw_n - 1 - off_w) / sw + 1, ow_n);
    const float* xc = x + ic * s.in_plane();
    float* dst = out + (r - r0) * ld;
    // One run per output row (od, oh) the chunk touches: zeros, copied taps, zeros.
    for (int64_t j = 0, ow0 = ow_p0, oh = oh_p0, od = od_p0; j < cols; ow0 = 0) {
      const int64_t n = std::min(ow_n - ow0, cols - j);
      const int64_t id = od * s.stride[0] + off_d, ih = oh * s.stride[1] + off_h;
      int64_t a = n, b = n;
      if (id >= 0 && id < s.in[0] && ih >= 0 && ih < s.in[1]) {
        a = std::min(std::max(lo - ow0, int64_t(0)), n);
        b = std::max(std::min(hi - ow0, n), a);
      }
      float* d = dst + j;
      for (int64_t i = 0; i < a; ++i) d[i] = 0.0f;
      if (a < b) {
        const float* src = xc + (id * s.in[1] + ih) * iw_n + ow0 * sw + off_w;
        if (sw == 1)
          for (int64_t i = a; i < b; ++i) d[i] = src[i];
        else
          for (int64_t i = a; i < b; ++i) d[i] = src[i * sw];
      }
      for (int64_t i = b; i < n; ++i) d[i] = 0.0f;
      j += n;
      if (++oh == s.out[1]) {
        oh = 0;
        ++od;
      }
    }
    // The next row's tap: (ic, kd, kh, kw) count up like the digits of r.
    if (++kw < s.k[2]) continue;
    kw = 0;
    if (++kh < s.k[1]) continue;
    kh = 0;
    if (++kd < s.k[0]) continue;
    kd = 0;
    ++ic;
  }
}

Error conv_im2col(KernelContext& ctx, const ConvArgs& a, const GemmKernels& g) {
  const ConvShape& s = a.s;
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups, k = cin_g * s.k_plane();
  const int64_t out_plane = s.out_plane(), nr = g.nn_nr;
  // Output positions per chunk: the column matrix (k, chunk) within kColumnBytes, in whole
  // GEMM column tiles (only a plane's last tile is partial).
  int64_t chunk = std::min(std::max(kColumnBytes / (4 * k), kMinChunk), kMaxChunk);
  chunk = std::max(chunk / nr * nr, nr);
  // The work as units of one column tile of one (batch item, group) plane. Enough units for
  // every thread: each thread takes an equal run of them and copies and multiplies on its
  // own (no handoff between the two steps); else both steps are split over the threads.
  const int64_t tiles = (out_plane + nr - 1) / nr, units = s.batch * s.groups * tiles;
  const int64_t slices = units >= 4 * ctx.num_threads() ? slice_count(ctx, units, cout_g * k * nr) : 1;
  float* col = nullptr;  // per slice (k, chunk)
  Error e = temp_array(ctx, "convolution", "im2col columns", slices * k * chunk, &col);
  if (e != Error::Ok) return e;
  // Output positions [c0, c1) of plane n * groups + grp.
  auto run = [&](KernelContext& c, int64_t plane, int64_t c0, int64_t c1, float* buf) {
    const int64_t grp = plane % s.groups;
    const float* x = static_cast<const float*>(a.x) + plane * cin_g * s.in_plane();
    const float* w = static_cast<const float*>(a.w) + grp * cout_g * k;
    const float* b = a.b != nullptr ? static_cast<const float*>(a.b) + grp * cout_g : nullptr;
    float* y = static_cast<float*>(a.y) + plane * cout_g * out_plane;
    for (int64_t p0 = c0; p0 < c1; p0 += chunk) {
      const int64_t cols = std::min(chunk, c1 - p0);
      // The copy costs 1/cout_g of the product: split too, or it would bound the speedup.
      c.parallel_for(k, grain_for(cols), [&](int64_t r0, int64_t r1) {
        im2col(x, s, r0, r1, p0, cols, buf + r0 * chunk, chunk);
      });
      gemm_nn(c, g, cout_g, cols, k, w, k, 1, buf, chunk, b, y + p0, out_plane);
    }
  };
  if (slices == 1) {
    for (int64_t plane = 0; plane < s.batch * s.groups; ++plane) run(ctx, plane, 0, out_plane, col);
    return Error::Ok;
  }
  parallel_slices(ctx, units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    KernelContext serial = ctx;
    serial.threads = nullptr;
    for (int64_t u = u0; u < u1;) {
      const int64_t t0 = u % tiles, t1 = std::min(tiles, t0 + u1 - u);
      run(serial, u / tiles, t0 * nr, std::min(t1 * nr, out_plane), col + sl * k * chunk);
      u += t1 - t0;
    }
  });
  return Error::Ok;
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
  if (s.c_out / s.groups >= kMinGemmRows) return conv_im2col(ctx, a, g);
  conv_portable(ctx, a);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
