// Driver of pocket::conv2d_packed (channels-last float32 convolution, weights in the file in
// the kernels' layout: parts.h ConvPackedArgs), over the ISA's ConvF32Kernels:
//   groups 1: an indirect GEMM. The work is cut into units of one tile of output positions
//       (mr) x one group of output channels (the wide tile's 32, else 16) of one batch item,
//       ordered channel group first when the weights outgrow L1, so that a thread's run of
//       units reads one weight panel (taps · c_in rows of 16 floats per block) while it is in
//       cache. Per unit the driver points the tile at each tap's input pixel (a zero pixel in
//       the padding), or with dilation 1 across at each kernel row's first pixel (k_w pixels
//       are contiguous in x and in the panel: fewer, longer runs; rows crossing the padding
//       are copied with zeros): no im2col, no packing; bias, residual and clamp are the
//       tile's epilogue.
//   depthwise: one output row per task, channels across vector lanes (kernels up to 16 rows
//       high; taller ones run the portable kernel).
#include <algorithm>

#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

constexpr const char* kOp = "conv2d_packed";
constexpr int64_t kMaxDwRows = 16;                 // conv_f32_dw_row's stack array of kernel rows
constexpr int64_t kSmallWeightBytes = 16 * 1024;  // packed weights that stay in L1

// rows[tap * mr + i]: position p0 + i's input pixel for each tap (positions past the plane
// repeat its last one: computed, never stored).
void point_rows(const ConvPackedArgs& a, const float* x, const float* zeros, int64_t p0, int mr,
                const float** rows) {
  const int64_t P = a.out_plane(), c = a.c_in;
  if (a.taps() == 1 && a.pad[0] == 0 && a.pad[1] == 0 && a.stride[0] == 1 && a.stride[1] == 1) {
    for (int i = 0; i < mr; ++i) rows[i] = x + std::min(p0 + i, P - 1) * c;  // 1x1: the pixel itself
    return;
  }
  int64_t oy = p0 / a.out[1], ox = p0 % a.out[1];
  for (int i = 0; i < mr; ++i) {
    if (p0 + i >= P) {
      for (int64_t tap = 0; tap < a.taps(); ++tap) rows[tap * mr + i] = rows[tap * mr + i - 1];
      continue;
    }
    const int64_t iy0 = oy * a.stride[0] - a.pad[0], ix0 = ox * a.stride[1] - a.pad[1];
    for (int64_t ki = 0, tap = 0; ki < a.k[0]; ++ki) {
      const int64_t iy = iy0 + ki * a.dil[0];
      const bool row_in = iy >= 0 && iy < a.in[0];
      for (int64_t kj = 0; kj < a.k[1]; ++kj, ++tap) {
        const int64_t ix = ix0 + kj * a.dil[1];
        rows[tap * mr + i] = row_in && ix >= 0 && ix < a.in[1] ? x + (iy * a.in[1] + ix) * c : zeros;
      }
    }
    if (++ox == a.out[1]) {
      ox = 0;
      ++oy;
    }
  }
}

// Kernel columns merged (dilation 1 across: a kernel row's k_w pixels are k_w · c_in
// contiguous floats of x, and k_w · c_in contiguous rows of the panel): rows[ki * mr + i]
// points at the first pixel of kernel row ki for position p0 + i; a row that crosses the
// left or right padding is copied to `scratch` with zeros in the padding.
void point_rows_merged(const ConvPackedArgs& a, const float* x, const float* zeros, float* scratch, int64_t p0,
                       int mr, const float** rows) {
  const int64_t P = a.out_plane(), c = a.c_in, kw = a.k[1], run = kw * c;
  int64_t oy = p0 / a.out[1], ox = p0 % a.out[1];
  for (int i = 0; i < mr; ++i) {
    if (p0 + i >= P) {
      for (int64_t ki = 0; ki < a.k[0]; ++ki) rows[ki * mr + i] = rows[ki * mr + i - 1];
      continue;
    }
    const int64_t iy0 = oy * a.stride[0] - a.pad[0], ix0 = ox * a.stride[1] - a.pad[1];
    for (int64_t ki = 0; ki < a.k[0]; ++ki) {
      const int64_t iy = iy0 + ki * a.dil[0];
      const float*& r = rows[ki * mr + i];
      if (iy < 0 || iy >= a.in[0]) {
        r = zeros;
      } else if (ix0 >= 0 && ix0 + kw <= a.in[1]) {
        r = x + (iy * a.in[1] + ix0) * c;
      } else {
        float* buf = scratch + (ki * mr + i) * run;
        for (int64_t kj = 0; kj < kw; ++kj) {
          const int64_t ix = ix0 + kj;
          if (ix >= 0 && ix < a.in[1])
            std::copy(x + (iy * a.in[1] + ix) * c, x + (iy * a.in[1] + ix + 1) * c, buf + kj * c);
          else
            std::fill(buf + kj * c, buf + (kj + 1) * c, 0.0f);
        }
        r = buf;
      }
    }
    if (++ox == a.out[1]) {
      ox = 0;
      ++oy;
    }
  }
}

Error dense(KernelContext& ctx, const ConvPackedArgs& a, const ConvF32Kernels& k) {
  const int mr = k.narrow.mr;
  const bool wide = k.wide.nr == 2 * kConvPackLanes;
  const int64_t blocks = a.blocks(), per_group = wide ? 2 : 1, col_groups = (blocks + per_group - 1) / per_group;
  const int64_t P = a.out_plane(), tiles = (P + mr - 1) / mr, taps = a.taps();
  const int64_t units = col_groups * a.batch * tiles, panel = taps * a.c_in * kConvPackLanes;
  const bool group_first = blocks * panel * 4 > kSmallWeightBytes;
  const int64_t slices = slice_count(ctx, units, mr * per_group * kConvPackLanes * taps * a.c_in);
  // Kernel columns merged into one run of k_w · c_in values where dilation allows.
  const bool merged = a.dil[1] == 1 && a.k[1] > 1;
  const int64_t run = merged ? a.k[1] * a.c_in : a.c_in, scratch_n = merged ? mr * a.k[0] * run : 0;
  float *bias = nullptr, *zeros = nullptr, *scratch = nullptr;
  const float** rows = nullptr;
  Error e = temp_array(ctx, kOp, "the padded bias", blocks * kConvPackLanes, &bias);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "a zero pixel", run, &zeros);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "input pixel pointers", slices * mr * taps, &rows);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "rows in the padding", slices * scratch_n, &scratch);
  if (e != Error::Ok) return e;
  std::fill(bias, bias + blocks * kConvPackLanes, 0.0f);
  if (a.bias != nullptr) std::copy(a.bias, a.bias + a.c_out, bias);
  std::fill(zeros, zeros + run, 0.0f);
  parallel_slices(ctx, units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    const float** r = rows + sl * mr * taps;
    ConvF32Tile t;
    t.rows = r;
    t.block_stride = panel;
    t.taps = merged ? a.k[0] : taps;
    t.c_in = run;
    t.lo = a.out_min;
    t.hi = a.out_max;
    t.ldy = a.c_out;
    for (int64_t u = u0; u < u1; ++u) {
      // Channel group first when the weights outgrow L1 (each panel read from cache once);
      // else position first (y written in whole rows, x read once).
      const int64_t g = group_first ? u / (a.batch * tiles) : u % col_groups;
      const int64_t bt = group_first ? u % (a.batch * tiles) : u / col_groups, n = bt / tiles, p0 = bt % tiles * mr;
      const int64_t b0 = g * per_group, c0 = b0 * kConvPackLanes;
      const ConvF32TileFn& fn = b0 + 1 < blocks ? k.wide : k.narrow;
      const float* x = a.x + n * a.in[0] * a.in[1] * a.c_in;
      if (merged)
        point_rows_merged(a, x, zeros, scratch + sl * scratch_n, p0, mr, r);
      else
        point_rows(a, x, zeros, p0, mr, r);
      const int64_t at = (n * P + p0) * a.c_out + c0;
      t.w = a.w + b0 * panel;
      t.bias = bias + c0;
      t.res = a.res != nullptr ? a.res + at : nullptr;
      t.y = a.y + at;
      t.rows_n = static_cast<int>(std::min<int64_t>(mr, P - p0));
      t.cols_n = static_cast<int>(std::min<int64_t>(fn.nr, a.c_out - c0));
      fn.fn(t);
    }
  });
  return Error::Ok;
}

Error depthwise(KernelContext& ctx, const ConvPackedArgs& a, const ConvF32Kernels& k) {
  const float* bias = a.bias;
  if (bias == nullptr) {
    float* z = nullptr;
    Error e = temp_array(ctx, kOp, "a zero bias", a.c_out, &z);
    if (e != Error::Ok) return e;
    std::fill(z, z + a.c_out, 0.0f);
    bias = z;
  }
  const int64_t rows = a.batch * a.out[0], row = a.out[1] * a.c_out;
  ctx.parallel_for(rows, grain_for(row * a.taps()), [&](int64_t r0, int64_t r1) {
    DwConvF32Row r;
    r.w = a.w;
    r.bias = bias;
    r.c = a.c_out;
    r.in_h = a.in[0];
    r.in_w = a.in[1];
    r.out_w = a.out[1];
    for (int d = 0; d < 2; ++d) {
      r.k[d] = a.k[d];
      r.stride[d] = a.stride[d];
      r.pad[d] = a.pad[d];
      r.dil[d] = a.dil[d];
    }
    r.lo = a.out_min;
    r.hi = a.out_max;
    for (int64_t i = r0; i < r1; ++i) {
      r.x = a.x + i / a.out[0] * a.in[0] * a.in[1] * a.c_in;
      r.oy = i % a.out[0];
      r.res = a.res != nullptr ? a.res + i * row : nullptr;
      r.y = a.y + i * row;
      k.dw_row(r);
    }
  });
  return Error::Ok;
}

}  // namespace

Error conv2d_packed_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k) {
  ConvPackedArgs a;
  Error e = prepare_conv2d_packed(ctx, args, &a);
  if (e != Error::Ok) return e;
  if (!a.depthwise()) return dense(ctx, a, k);
  if (a.k[0] <= kMaxDwRows) return depthwise(ctx, a, k);
  conv2d_packed_portable(ctx, a);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
