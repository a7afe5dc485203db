// aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
//
// input (N, C, H, W) sampled at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo). grid holds (x, y) in
// [-1, 1] across the input's width and height: with align_corners -1 and 1 are the centers of
// the edge pixels, without it their outer edges. interpolation_mode 0 is bilinear, 1 nearest,
// 2 bicubic (Keys' cubic convolution, a = -0.75, as ATen); padding_mode 0 reads zeros outside
// the input, 1 the border pixel, 2 the input reflected at its border.
#include <cmath>

#include "nn_util.h"

namespace pocket {

namespace {

const char* const kOp = "grid_sampler_2d";

struct Sampler {
  int64_t n = 0, c = 0, h = 0, w = 0, out_h = 0, out_w = 0;
  int64_t mode = 0, padding = 0;
  bool align = false;
};

// Reflects x into [low, high] (both given doubled, as ATen's reflect_coordinates).
template <typename T>
T reflect(T x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return T(0);
  const T low = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const T extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// A grid coordinate in [-1, 1] -> a pixel coordinate in an input dim of `size`.
template <typename T>
T unnormalize(T g, int64_t size, const Sampler& s) {
  return s.align ? (g + 1) / 2 * static_cast<T>(size - 1) : ((g + 1) * static_cast<T>(size) - 1) / 2;
}

// A pixel coordinate with the padding mode applied (border: clipped; reflection: reflected).
template <typename T>
T pad_coordinate(T x, int64_t size, const Sampler& s) {
  const T last = static_cast<T>(size - 1);
  if (s.padding == 2) x = s.align ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
  if (s.padding != 0) x = std::fmin(last, std::fmax(x, T(0)));
  return x;
}

// Keys' cubic convolution of 4 taps at fraction t between the middle two.
template <typename T>
T cubic(const T* v, T t) {
  const T a = T(-0.75);
  auto near = [&](T d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };        // |d| <= 1
  auto far = [&](T d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return v[0] * far(t + 1) + v[1] * near(t) + v[2] * near(1 - t) + v[3] * far(2 - t);
}

// Bicubic: 4 x 4 taps around (ix, iy) unpadded, each tap's coordinate padded on its own.
template <typename T>
void sample_bicubic(const T* x, T* y, const Sampler& s, T ix, T iy) {
  const T fx = std::floor(ix), fy = std::floor(iy);
  const int64_t plane = s.h * s.w, out_plane = s.out_h * s.out_w;
  for (int64_t ch = 0; ch < s.c; ++ch) {
    T rows[4];
    for (int i = 0; i < 4; ++i) {
      T taps[4];
      const int64_t r = static_cast<int64_t>(pad_coordinate(fy - 1 + i, s.h, s));
      for (int j = 0; j < 4; ++j) {
        const int64_t q = static_cast<int64_t>(pad_coordinate(fx - 1 + j, s.w, s));
        taps[j] = r >= 0 && r < s.h && q >= 0 && q < s.w ? x[ch * plane + r * s.w + q] : T(0);
      }
      rows[i] = cubic(taps, ix - fx);
    }
    y[ch * out_plane] = cubic(rows, iy - fy);
  }
}

// One output pixel for every channel: x (C, H, W) plane set, y advances by out_h * out_w.
template <typename T>
void sample(const T* x, T* y, const Sampler& s, T gx, T gy) {
  if (s.mode == 2) return sample_bicubic(x, y, s, unnormalize(gx, s.w, s), unnormalize(gy, s.h, s));
  const T ix = pad_coordinate(unnormalize(gx, s.w, s), s.w, s);
  const T iy = pad_coordinate(unnormalize(gy, s.h, s), s.h, s);
  const int64_t plane = s.h * s.w, out_plane = s.out_h * s.out_w;
  auto inside = [&](int64_t r, int64_t col) { return r >= 0 && r < s.h && col >= 0 && col < s.w; };
  if (s.mode == 1) {
    const int64_t col = static_cast<int64_t>(std::nearbyint(ix)), r = static_cast<int64_t>(std::nearbyint(iy));
    for (int64_t ch = 0; ch < s.c; ++ch) y[ch * out_plane] = inside(r, col) ? x[ch * plane + r * s.w + col] : T(0);
    return;
  }
  const T fx = std::floor(ix), fy = std::floor(iy);
  const int64_t c0 = static_cast<int64_t>(fx), r0 = static_cast<int64_t>(fy);
  const T dx = ix - fx, dy = iy - fy;
  const int64_t rows[4] = {r0, r0, r0 + 1, r0 + 1}, cols[4] = {c0, c0 + 1, c0, c0 + 1};
  const T weights[4] = {(1 - dx) * (1 - dy), dx * (1 - dy), (1 - dx) * dy, dx * dy};
  for (int64_t ch = 0; ch < s.c; ++ch) {
    T acc = 0;
    for (int k = 0; k < 4; ++k)
      if (inside(rows[k], cols[k])) acc += x[ch * plane + rows[k] * s.w + cols[k]] * weights[k];
    y[ch * out_plane] = acc;
  }
}

Error plan(KernelContext& ctx, const Tensor& in, const Tensor& grid, Value** args, Sampler* s) {
  char a[128], b[128];
  if (in.dim != 4 || grid.dim != 4 || grid.sizes[0] != in.sizes[0] || grid.sizes[3] != 2)
    return ctx.fail(Error::InvalidArgument, "%s: input %s and grid %s must be (N, C, H, W) and (N, H_out, W_out, 2)",
                    kOp, shape_string(in.sizes, in.dim, a, sizeof a), shape_string(grid.sizes, grid.dim, b, sizeof b));
  if (in.sizes[2] < 1 || in.sizes[3] < 1)
    return ctx.fail(Error::InvalidArgument, "%s: input %s has an empty spatial dim", kOp,
                    shape_string(in.sizes, in.dim, a, sizeof a));
  s->n = in.sizes[0], s->c = in.sizes[1], s->h = in.sizes[2], s->w = in.sizes[3];
  s->out_h = grid.sizes[1], s->out_w = grid.sizes[2];
  s->mode = args[2]->i, s->padding = args[3]->i, s->align = args[4]->b;
  if (s->mode < 0 || s->mode > 2)
    return ctx.fail(Error::InvalidArgument,
                    "%s: interpolation_mode is %lld, expected 0 (bilinear), 1 (nearest) or 2 (bicubic)",
                    kOp, static_cast<long long>(s->mode));
  if (s->padding < 0 || s->padding > 2)
    return ctx.fail(Error::InvalidArgument, "%s: padding_mode is %lld, expected 0 (zeros), 1 (border) or 2 (reflection)",
                    kOp, static_cast<long long>(s->padding));
  return detail::expect_dtype(ctx, kOp, "grid", grid, in.dtype);
}

}  // namespace

Error op_grid_sampler_2d(KernelContext& ctx, Value** args) {
  const Tensor &in = args[0]->tensor, &grid = args[1]->tensor;
  Tensor& out = args[5]->tensor;
  Sampler s;
  Error e = detail::expect_float_io(ctx, kOp, in, out);
  if (e == Error::Ok) e = plan(ctx, in, grid, args, &s);
  const int64_t sizes[4] = {s.n, s.c, s.out_h, s.out_w};
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, out, sizes, 4);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, kOp, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = nullptr, *g = nullptr;
    e = detail::contiguous_data(ctx, kOp, "input", in, &x);
    if (e == Error::Ok) e = detail::contiguous_data(ctx, kOp, "grid", grid, &g);
    if (e != Error::Ok) return;
    T* y = out.data_as<T>();
    const int64_t pixels = s.out_h * s.out_w;
    for (int64_t b = 0; b < s.n; ++b)
      for (int64_t p = 0; p < pixels; ++p) {
        const T* gp = g + (b * pixels + p) * 2;
        sample(x + b * s.c * s.h * s.w, y + b * s.c * pixels + p, s, gp[0], gp[1]);
      }
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
