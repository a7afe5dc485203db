// Driver of pocket::conv2d_packed (channels-last float32 convolution, weights in the file in
// the kernels' layout: parts.h ConvPackedArgs), over the ISA's ConvF32Kernels:
//   groups 1: an indirect GEMM. The work is cut into units of one tile of output positions
//       (mr; AVX-512: 8, or 7 where 8 would overshoot the plane) x one group of output channels (as
//       many blocks of 16 as the ISA's widest tile takes: AVX-512 48, else 16) of one batch item,
//       ordered channel group first when the weights outgrow L1, so that a thread's run of
//       units reads one weight panel (taps · c_in rows of 16 floats per block) while it is in
//       cache; one tile call runs up to 8 consecutive position tiles (UnitOrder). A
//       convolution with padding first copies its input into a zero-padded image (one pass
//       over x); then each output position's taps lie at fixed offsets from its
//       first input pixel, and the driver hands the tile one pointer per position plus one
//       offset per tap (made once per call), or with dilation 1 across one offset per kernel
//       row (k_w pixels are contiguous in x and in the panel: fewer, longer runs): no im2col,
//       no packing, no case for the borders; bias, residual and clamp are the tile's
//       epilogue.
//   depthwise: one output row per task, channels across vector lanes (kernels up to 16 rows
//       high; taller ones run the portable kernel).
//   The .act overloads' activation (silu, sigmoid, hardswish, hardsigmoid: the nn kernel set's
//   activate_rows) runs over each tile call's or row's output right after it, while that is in
//   cache: no pass through memory of its own. (On a Zen 3 a SiLU costs mostly its arithmetic, so
//   this saves memory and instructions more than time.)
// And of pocket::conv2d_winograd (3x3, stride 1, groups 1, the weight transformed at export):
//   Winograd F(2x2, 3x3) through the ISA's transforms and the groups-1 tile (winograd below).
// And of pocket::max_pool2d_channels_last, the pooling inside such a chain: one output row per
// task, channels across vector lanes, as depthwise.
#include <algorithm>

#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

constexpr const char* kOp = "conv2d_packed";
constexpr int64_t kSmallWeightBytes = 16 * 1024;  // packed weights that stay in L1

// The .act overloads' activation, in place over `rows` rows of `cols` floats `ldy` apart; a no-op
// for the plain ops.
struct Activation {
  ConvActivation act;
  void (*fn)(ConvActivation act, float* y, int64_t ldy, int64_t rows, int64_t cols) = nullptr;

  Activation(ConvActivation a, const NnKernels* k) : act(a) {
    if (k != nullptr && act != ConvActivation::None) fn = k->activate_rows;
  }
  void operator()(float* y, int64_t ldy, int64_t rows, int64_t cols) const {
    if (fn != nullptr) fn(act, y, ldy, rows, cols);
  }
};

// The input with the convolution's zero padding around it, when it has any: batch items of
// hp x wp pixels (the padded plane), so that every tap of every output position is a pixel
// of it and a position's taps lie at fixed offsets from its first one.
struct Image {
  const float* x = nullptr;
  int64_t hp = 0, wp = 0;
};

Error pad_input(KernelContext& ctx, const ConvPackedArgs& a, Image* im) {
  const int64_t c = a.c_in, h = a.in[0], w = a.in[1], ph = a.pad[0], pw = a.pad[1];
  im->hp = h + 2 * ph;
  im->wp = w + 2 * pw;
  if (ph == 0 && pw == 0) {
    im->x = a.x;
    return Error::Ok;
  }
  float* xp = nullptr;
  Error e = temp_array(ctx, kOp, "the padded input", a.batch * im->hp * im->wp * c, &xp);
  if (e != Error::Ok) return e;
  const int64_t hp = im->hp, row = im->wp * c;
  ctx.parallel_for(a.batch * hp, grain_for(row), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* dst = xp + r * row;
      const int64_t n = r / hp, iy = r % hp - ph;
      if (iy < 0 || iy >= h) {
        std::fill(dst, dst + row, 0.0f);
        continue;
      }
      std::fill(dst, dst + pw * c, 0.0f);
      std::copy(a.x + ((n * h + iy) * w) * c, a.x + ((n * h + iy + 1) * w) * c, dst + pw * c);
      std::fill(dst + (pw + w) * c, dst + row, 0.0f);
    }
  });
  im->x = xp;
  return Error::Ok;
}

// rows[i]: the first input pixel (tap 0) of output position p0 + i of batch item n
// (positions past the plane repeat its last one: computed, never stored).
void point_rows(const ConvPackedArgs& a, const Image& im, int64_t n, int64_t p0, int mr, const float** rows) {
  const int64_t P = a.out_plane(), c = a.c_in;
  const float* x = im.x + n * im.hp * im.wp * c;
  int64_t oy = p0 / a.out[1], ox = p0 % a.out[1];
  for (int i = 0; i < mr; ++i) {
    rows[i] = x + (oy * a.stride[0] * im.wp + ox * a.stride[1]) * c;
    if (p0 + i + 1 >= P) continue;
    if (++ox == a.out[1]) {
      ox = 0;
      ++oy;
    }
  }
}

// dense()'s units (one position tile x one channel group of a batch item) in a slice's order,
// in runs: consecutive position tiles of one group and batch item, one tile call each.
//   group first: group g, batch item n, position tile p.
//   position first: batch item n, chunks of kConvRunTiles position tiles, group g, tile p of the
//     chunk (a chunk's input rows are read once per group, while in cache).
struct UnitOrder {
  int64_t groups, batch, tiles;  // channel groups, batch items, position tiles per plane
  bool group_first;
  int64_t g = 0, n = 0, p = 0;    // the current unit
  int64_t begin = 0, end = 0;     // position tiles of its run's chunk (group first: the plane)

  void seek(int64_t u) {
    if (group_first) {
      g = u / (batch * tiles);
      n = u / tiles % batch;
      p = u % tiles;
      begin = 0;
      end = tiles;
      return;
    }
    n = u / (tiles * groups);
    const int64_t v = u % (tiles * groups);
    begin = v / (kConvRunTiles * groups) * kConvRunTiles;  // the chunks before are whole
    const int64_t in_chunk = v - begin * groups, chunk = std::min(kConvRunTiles, tiles - begin);
    g = in_chunk / chunk;
    p = begin + in_chunk % chunk;
    end = begin + chunk;
  }
  // Past the current unit and the k - 1 after it, all in its run (k <= end - p).
  void advance(int64_t k) {
    if ((p += k) < end) return;
    if (group_first) {
      p = 0;
      if (++n < batch) return;
      n = 0;
      ++g;
      return;
    }
    p = begin;
    if (++g < groups) return;
    g = 0;
    if (end == tiles) {
      end = 0;
      ++n;
    }
    p = begin = end;
    end = std::min(tiles, begin + kConvRunTiles);
  }
};

Error dense(KernelContext& ctx, const ConvPackedArgs& a, const ConvF32Kernels& k, const Activation& act) {
  // Rows per tile: the alternative tiles when their last tile of a plane computes fewer
  // positions past it (8 x 6 + 1 for 7x7: 7 rows wasted; 7 x 7: none).
  const int64_t P = a.out_plane();
  const auto overshoot = [P](int64_t m) { return (P + m - 1) / m * m - P; };
  const ConvF32TileFn* const fns = overshoot(k.alt[0].mr) < overshoot(k.tiles[0].mr) ? k.alt : k.tiles;
  const int mr = fns[0].mr;
  // Columns in groups of the widest tile's blocks; a group of fewer takes the tile that fits.
  const int64_t blocks = a.blocks(), per_group = fns[2].nr / kConvPackLanes;
  const int64_t col_groups = (blocks + per_group - 1) / per_group;
  const int64_t tiles = (P + mr - 1) / mr, taps = a.taps();
  const int64_t units = col_groups * a.batch * tiles, panel = taps * a.c_in * kConvPackLanes;
  const bool group_first = blocks * panel * 4 > kSmallWeightBytes;
  const int64_t slices = slice_count(ctx, units, mr * per_group * kConvPackLanes * taps * a.c_in);
  // Kernel columns merged where dilation allows: a kernel row's k_w pixels are k_w · c_in
  // contiguous floats of the (padded) input and k_w · c_in contiguous rows of the panel.
  const bool merged = a.dil[1] == 1 && a.k[1] > 1;
  const int64_t tile_taps = merged ? a.k[0] : taps;
  Image im;
  float* bias = nullptr;
  int64_t* offsets = nullptr;
  const float** rows = nullptr;
  Error e = temp_array(ctx, kOp, "the padded bias", blocks * kConvPackLanes, &bias);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "tap offsets", tile_taps, &offsets);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "input pixel pointers", slices * kConvRunTiles * mr, &rows);
  if (e == Error::Ok) e = pad_input(ctx, a, &im);
  if (e != Error::Ok) return e;
  std::fill(bias, bias + blocks * kConvPackLanes, 0.0f);
  if (a.bias != nullptr) std::copy(a.bias, a.bias + a.c_out, bias);
  for (int64_t ki = 0, t = 0; ki < a.k[0]; ++ki)
    for (int64_t kj = 0; kj < (merged ? 1 : a.k[1]); ++kj, ++t)
      offsets[t] = (ki * a.dil[0] * im.wp + kj * a.dil[1]) * a.c_in;
  // Output rows that read whole input rows one after the other (1x1, stride 1, no padding:
  // position p reads pixel p): the tiles step through the positions without a table of
  // pointers (filling one took 3.5% of MobileNetV2).
  const bool contiguous = a.stride[0] * im.wp == a.out[1] * a.stride[1];
  parallel_slices(ctx, units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    const float** r = rows + sl * kConvRunTiles * mr;
    ConvF32Tile t;
    t.rows = r;
    t.tap_offsets = offsets;
    t.block_stride = panel;
    t.taps = tile_taps;
    t.c_in = merged ? a.k[1] * a.c_in : a.c_in;
    t.lo = a.out_min;
    t.hi = a.out_max;
    t.ldy = a.c_out;
    // Channel group first when the weights outgrow L1 (each panel read from cache once);
    // else position first, in chunks of 8 tiles (x read from memory once: a chunk's rows stay
    // in cache while each group reads them).
    UnitOrder o{col_groups, a.batch, tiles, group_first};
    o.seek(u0);
    for (int64_t u = u0; u < u1;) {
      const int64_t run = std::min({u1 - u, o.end - o.p, kConvRunTiles});
      const int64_t b0 = o.g * per_group, c0 = b0 * kConvPackLanes, p0 = o.p * mr;
      const ConvF32TileFn& fn = fns[std::min(per_group, blocks - b0) - 1];
      if (contiguous) {
        t.rows = nullptr;
        t.row0 = im.x + (o.n * im.hp * im.wp + p0 * a.stride[1]) * a.c_in;
        t.row_step = a.stride[1] * a.c_in;
      } else {
        point_rows(a, im, o.n, p0, static_cast<int>(run * mr), r);
      }
      const int64_t at = (o.n * P + p0) * a.c_out + c0;
      t.w = a.w + b0 * panel;
      t.bias = bias + c0;
      t.res = a.res != nullptr ? a.res + at : nullptr;
      t.y = a.y + at;
      t.tiles = static_cast<int>(run);
      t.rows_n = static_cast<int>(std::min<int64_t>(mr, P - p0 - (run - 1) * mr));
      t.cols_n = static_cast<int>(std::min<int64_t>(fn.nr, a.c_out - c0));
      fn.fn(t);
      act(t.y, a.c_out, (run - 1) * mr + t.rows_n, t.cols_n);
      u += run;
      o.advance(run);
    }
  });
  return Error::Ok;
}

// Winograd F(2x2, 3x3) (conv2d_winograd: the weight U is (blocks, 16 terms, c_in, 16), each
// term's panel as a groups-1 panel of one tap). The 2x2 output tiles of all batch items, in
// row-major order, are cut into slices (one per thread; with few tiles for the threads, the
// output channels are cut as well) and a slice into chunks of up to `chunk` tiles, each run
// in three steps on the slice's scratch:
//   the input transform, V[term][t] = (B^T d B)[term] of tile t's 4x4 input pixels (c_in
//     floats each; the padding and what lies past the input are zeros): wino_in;
//   16 products M[term] = V[term] U[term] (tiles x c_in by c_in x c_out), by the groups-1
//     tile: one tap at the term's offset into V, no bias, no bounds;
//   the output transform, y = A^T M A + bias (+ residual), clamped: wino_out.
// A chunk's V and M stay in L2 while the weights stream through once per chunk.
constexpr int kWinoTerms = 16;
constexpr float kZeroBias[4 * kConvPackLanes] = {};  // the products' bias (a tile's nr at most)
constexpr int64_t kWinoScratchBytes = 128 * 1024;  // a chunk's V and M

Error winograd(KernelContext& ctx, const ConvPackedArgs& a, const ConvF32Kernels& k, const Activation& act) {
  const int mr = k.tiles[0].mr;
  const int64_t blocks = a.blocks(), per_group = k.tiles[1].nr / kConvPackLanes;
  const int64_t cin = a.c_in, ldm = blocks * kConvPackLanes;
  const int64_t th = (a.out[0] + 1) / 2, tw = (a.out[1] + 1) / 2, tiles = a.batch * th * tw;
  const int64_t fit = kWinoScratchBytes / static_cast<int64_t>(sizeof(float) * kWinoTerms * (cin + ldm)) / mr * mr;
  const int64_t chunk = std::max<int64_t>(mr, std::min<int64_t>(8 * mr, fit));
  // Slices of tiles, and with few tiles for the threads (each would read all the weights for a
  // tile or two) slices of output channels too: tile part s / col_parts, channel part
  // s % col_parts.
  const int64_t slices = slice_count(ctx, tiles * blocks, kWinoTerms * cin * kConvPackLanes);
  const int64_t col_parts = tiles >= 8 * slices ? 1 : std::min(slices, blocks), tile_parts = slices / col_parts;
  // A term's V and M one cache line past a multiple of their size: 16 terms 4 KB apart would
  // share one L1 set (a tile's transforms touch all 16).
  const int64_t sv = chunk * cin + kConvPackLanes, sm = chunk * ldm + kConvPackLanes;
  const int64_t scratch_floats = kWinoTerms * (sv + sm);
  float* scratch = nullptr;
  const float** rows = nullptr;
  Error e = temp_array(ctx, kOp, "the Winograd transforms", slices * scratch_floats, &scratch);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "tile row pointers", slices * chunk, &rows);
  if (e != Error::Ok) return e;
  const auto run_slice = [&](int64_t sl) {
    const int64_t tp = sl / col_parts, cp = sl % col_parts;
    const int64_t t_begin = tiles * tp / tile_parts, t_end = tiles * (tp + 1) / tile_parts;
    const int64_t blk0 = blocks * cp / col_parts, blk1 = blocks * (cp + 1) / col_parts;
    const int64_t c0 = blk0 * kConvPackLanes, c1 = std::min(a.c_out, blk1 * kConvPackLanes);
    float* const v = scratch + sl * scratch_floats;  // [term][chunk][c_in], terms sv apart
    float* const m = v + kWinoTerms * sv;             // [term][chunk][ldm], terms sm apart
    const float** const r = rows + sl * chunk;
    int64_t term_offset = 0;  // the products' one tap: V[term] from V[0]
    ConvF32Tile tl;
    tl.tap_offsets = &term_offset;
    tl.taps = 1;
    tl.c_in = cin;
    tl.block_stride = kWinoTerms * cin * kConvPackLanes;
    tl.bias = kZeroBias;
    tl.ldy = ldm;
    WinoF32In in;
    in.term_stride = sv;
    in.c = cin;
    WinoF32Out out;
    out.term_stride = sm;
    out.c = c1 - c0;
    out.bias = a.bias != nullptr ? a.bias + c0 : nullptr;
    out.lo = a.out_min;
    out.hi = a.out_max;
    // f(t, n, ty, tx) for the chunk's tiles t0 + t, t < tn: batch item n, tile row ty, column tx.
    const auto each_tile = [&](int64_t t0, int64_t tn, auto&& f) {
      int64_t n = t0 / (th * tw), ty = t0 / tw % th, tx = t0 % tw;
      for (int64_t t = 0; t < tn; ++t) {
        f(t, n, ty, tx);
        if (++tx < tw) continue;
        tx = 0;
        if (++ty < th) continue;
        ty = 0;
        ++n;
      }
    };
    for (int64_t t0 = t_begin; t0 < t_end; t0 += chunk) {
      const int64_t tn = std::min(chunk, t_end - t0);
      each_tile(t0, tn, [&](int64_t t, int64_t n, int64_t ty, int64_t tx) {
        for (int i = 0; i < 4; ++i) {
          const int64_t iy = 2 * ty - a.pad[0] + i;
          const bool row_in = iy >= 0 && iy < a.in[0];
          for (int j = 0; j < 4; ++j) {
            const int64_t ix = 2 * tx - a.pad[1] + j;
            in.d[i * 4 + j] = row_in && ix >= 0 && ix < a.in[1] ? a.x + ((n * a.in[0] + iy) * a.in[1] + ix) * cin
                                                                 : nullptr;
          }
        }
        in.v = v + t * cin;
        k.wino_in(in);
      });
      // Row pointers of the chunk's GEMM tiles (past tn: the last tile again, never stored).
      for (int64_t t = 0; t < (tn + mr - 1) / mr * mr; ++t) r[t] = v + std::min(t, tn - 1) * cin;
      // Blocks of output channels: the few-rows tile while a whole one fits, then wide, narrow.
      const int64_t few = tn <= k.few.mr && k.few.mr < mr ? k.few.nr / kConvPackLanes : 0;
      for (int64_t b0 = blk0, step = 0; b0 < blk1; b0 += step) {
        const bool use_few = few > 0 && b0 + few <= blk1;
        const ConvF32TileFn& fn = use_few ? k.few : k.tiles[b0 + 1 < blk1 ? 1 : 0];
        step = use_few ? few : per_group;
        tl.cols_n = static_cast<int>(std::min<int64_t>(fn.nr, a.c_out - b0 * kConvPackLanes));
        for (int term = 0; term < kWinoTerms; ++term) {
          term_offset = term * sv;
          tl.w = a.w + (b0 * kWinoTerms + term) * cin * kConvPackLanes;
          for (int64_t p0 = 0; p0 < tn; p0 += fn.mr) {
            tl.rows = r + p0;
            tl.y = m + term * sm + p0 * ldm + b0 * kConvPackLanes;
            tl.rows_n = static_cast<int>(std::min<int64_t>(fn.mr, tn - p0));
            fn.fn(tl);
          }
        }
      }
      each_tile(t0, tn, [&](int64_t t, int64_t n, int64_t ty, int64_t tx) {
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) {
            const int64_t oy = 2 * ty + i, ox = 2 * tx + j;
            const bool inside = oy < a.out[0] && ox < a.out[1];
            const int64_t at = ((n * a.out[0] + oy) * a.out[1] + ox) * a.c_out + c0;
            out.y[i * 2 + j] = inside ? a.y + at : nullptr;
            out.res[i * 2 + j] = inside && a.res != nullptr ? a.res + at : nullptr;
          }
        out.m = m + t * ldm + c0;
        k.wino_out(out);
        for (float* y : out.y)
          if (y != nullptr) act(y, out.c, 1, out.c);
      });
    }
  };
  ctx.parallel_for(tile_parts * col_parts, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t sl = s0; sl < s1; ++sl) run_slice(sl);
  });
  return Error::Ok;
}

Error depthwise(KernelContext& ctx, const ConvPackedArgs& a, const ConvF32Kernels& k, const Activation& act) {
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
    set_window(a, a.c_out, &r);
    r.w = a.w;
    r.bias = bias;
    r.lo = a.out_min;
    r.hi = a.out_max;
    for (int64_t i = r0; i < r1; ++i) {
      r.x = a.x + i / a.out[0] * a.in[0] * a.in[1] * a.c_in;
      r.oy = i % a.out[0];
      r.res = a.res != nullptr ? a.res + i * row : nullptr;
      r.y = a.y + i * row;
      k.dw_row(r);
      act(r.y, row, 1, row);
    }
  });
  return Error::Ok;
}

}  // namespace

Error conv2d_packed_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k, const NnKernels* act) {
  ConvPackedArgs a;
  Error e = prepare_conv2d_packed(ctx, args, &a, false, act != nullptr);
  if (e != Error::Ok) return e;
  if (!a.depthwise()) return dense(ctx, a, k, Activation(a.act, act));
  if (a.k[0] <= kRowFnMaxRows) return depthwise(ctx, a, k, Activation(a.act, act));
  conv2d_packed_portable(ctx, a);  // its own (scalar) activation
  return Error::Ok;
}

Error conv2d_winograd_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k, const NnKernels* act) {
  ConvPackedArgs a;
  Error e = prepare_conv2d_packed(ctx, args, &a, true, act != nullptr);
  if (e != Error::Ok) return e;
  return winograd(ctx, a, k, Activation(a.act, act));
}

Error max_pool2d_channels_last_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k) {
  MaxPoolChannelsLastArgs a;
  Error e = prepare_max_pool2d_channels_last(ctx, args, &a);
  if (e != Error::Ok) return e;
  if (a.k[0] > kRowFnMaxRows) {  // the row function's stack array of kernel rows
    max_pool2d_channels_last_portable(ctx, a);
    return Error::Ok;
  }
  ctx.parallel_for(a.batch * a.out[0], grain_for(a.out[1] * a.c * a.k[0] * a.k[1]), [&](int64_t r0, int64_t r1) {
    MaxPoolF32Row r;
    set_window(a, a.c, &r);
    for (int64_t i = r0; i < r1; ++i) {
      r.x = a.x + i / a.out[0] * a.in[0] * a.in[1] * a.c;
      r.oy = i % a.out[0];
      r.y = a.y + i * a.out[1] * a.c;
      k.max_pool_row(r);
    }
  });
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
