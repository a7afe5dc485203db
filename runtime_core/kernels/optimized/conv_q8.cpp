// Driver of pocket::conv2d_q8, conv2d_q8_packed and conv2d_q8_channels_last: an indirect GEMM
// (after XNNPACK's igemm) on the input quantized once, with the same results as the portable
// kernel.
//   1. x (batch, c_in, h, w) float32 -> xq (batch, groups, steps, h + 2 pad_h, w + 2 pad_w, 4):
//      each value quantized as the portable kernel does it (conv_q8_quantize), stored as the
//      variant's element (see ConvQ8Tile in ukernels.h), a quad of a pixel's channels
//      together; the border and the channels past c_in / groups (up to steps · 4; their
//      weights are zero) hold the padding value. Every tap of every output position lies
//      inside: the tiles' input pointers need no bounds checks. A channels-last x (groups 1)
//      becomes xq (batch, h + 2 pad_h, w + 2 pad_w, steps · 4) instead: a pixel's channels are
//      contiguous in x, so each input row quantizes as one run, and the steps of a pixel lie
//      side by side for the tile. An int8 x (already quantized) is only converted to the
//      variant's element.
//   2. The weights: every variant reads the file's packed layout (conv2d_q8_packed) as it is;
//      for conv2d_q8 the OIHW weight is packed into it first. Each channel gets its corr (i8
//      only), mult and bias.
//   3. Tiles of mr consecutive output positions of one (batch item, group): each position's
//      first input pixel, to which the tile adds one offset per tap (the same for every
//      position, made once per call), then one microkernel call per block of output channels.
//      Threads take runs of tiles. An int8 y is requantized in the tile's store.
// Groups with few output channels would make tiles of mostly zeros. Depthwise 3x3 (one input
// channel per group, stride 1 or 2) runs the fp32 depthwise microkernel on the quantized
// values as floats: every product and partial sum is an integer below 2^24 (9 · 255 · 128),
// so the float sums are exact and the results identical. Channels-last depthwise has its own
// driver (conv_q8_dw.cpp). Other such groups run the portable kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "../portable/parallel_util.h"
#include "conv_q8_parts.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

// The instruction's kept block (KernelContext::kept_block) for arrays a convolution derives
// from its weight, w_scales and bias (args 1-3, to be program constants), keyed by everything
// else they follow: the kernel variant, those arguments' addresses, the quantization scalars,
// whether the output is requantized from the sums and the numbers of the arrays' layout.
void* kept_arrays(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, bool requantize_sums,
                  std::initializer_list<int64_t> layout, size_t bytes, bool* ready) {
  struct Key {  // whole 8-byte fields: no padding
    const void* kernels;
    const void* w;
    const void* w_scales;
    const void* bias;
    double x_scale, out_scale;
    int64_t zero_point, out_zero_point, requantize_sums;
    int64_t layout[6];
  } key{&k, s.w, s.w_scales, s.bias, s.x_scale, s.out_scale, s.zero_point, s.out_zero_point, requantize_sums, {}};
  std::copy(layout.begin(), layout.begin() + std::min<size_t>(layout.size(), 6), key.layout);
  const uint64_t constants = 0b0110 | (s.bias != nullptr ? 0b1000 : 0);
  return ctx.kept_block(constants, &key, sizeof key, bytes, ready);
}

// Whether every value sum · q_mult[i] + q_bias[i] of conv_q8_requantize_sum (i < n) is a
// number well inside the int32 range, for the sums of k weights and inputs (|sum| <= 255 ·
// 128 · k): then the vector kernels convert it to an integer without clamping it first (the
// clamp on the integers gives the same values). Room of a factor of two covers the rounding of
// the product and the sum.
bool requantized_in_range(const float* q_mult, const float* q_bias, int64_t n, int64_t k) {
  const double sum_bound = 255.0 * 128.0 * static_cast<double>(k);
  for (int64_t i = 0; i < n; ++i)  // (written so that a NaN fails)
    if (!(std::fabs(static_cast<double>(q_mult[i])) * sum_bound + std::fabs(static_cast<double>(q_bias[i])) < 0x1p30))
      return false;
  return true;
}

namespace {

// Output channels per group below which the portable kernel is faster.
constexpr int64_t kMinTileChannels = 4;
constexpr int64_t kKc = kConvPackQuad;                          // input channels per step
constexpr int64_t kPackBlock = kConvPackLanes * kConvPackQuad;  // bytes of one packed step

struct Plan {
  const ConvQ8Args& s;
  const ConvQ8Kernels& k;
  const ConvQ8TileFn* tiles;   // k.tiles, or k.raw_tiles: see pick_tile
  int64_t cin_g, cout_g, steps, taps;
  int64_t hp, wp;              // the padded input plane
  int64_t cout_pad;            // per-channel array entries per group
  int32_t pad_value;           // the stored element of padding
  int64_t blocks;              // weight blocks (of 16 channels) per group
  int64_t pixel;               // xq elements per pixel: 4, or steps · 4 channels-last
  int64_t x_step;              // xq elements between a pixel's steps
  bool raw;                    // xq is the int8 x itself (tiles: the variant's raw tiles)
};

// The per-channel arrays of the tiles (entries g * cout_pad + oc; zero past cout_g).
struct ChannelParams {
  int32_t* corr = nullptr;
  double* mult = nullptr;
  float* bias = nullptr;
  float* q_mult = nullptr;  // an int8 y without a residual: q_mult, q_bias of conv_q8_requantize_sum
  float* q_bias = nullptr;
  int32_t* q_in_range = nullptr;  // kept with q_mult: one word, requantized_in_range of q_mult and q_bias
};

// corr, mult and bias (or q_mult and q_bias) of group g's channels, from the packed weight w
// (the file's, or the one packed here).
void channel_params(const Plan& p, const int8_t* w, int64_t g, const ChannelParams& c) {
  int32_t* corr = c.corr;
  double* mult = c.mult;
  float* bias = c.bias;
  const ConvQ8Args& s = p.s;
  const int64_t at = g * p.cout_pad;
  std::fill(corr + at, corr + at + p.cout_pad, 0);
  std::fill(mult + at, mult + at + p.cout_pad, 0.0);
  std::fill(bias + at, bias + at + p.cout_pad, 0.0f);
  if (p.k.elem_bytes == 1) {
    // Σ w per channel (blocks · 16 entries: zero past cout_g, whose weights are zero)
    p.k.weight_sums(w + g * p.blocks * p.taps * p.steps * kPackBlock, p.blocks, p.taps * p.steps, corr + at);
    const int32_t factor = static_cast<int32_t>(s.zero_point) + p.k.byte_offset;
    // Exact: |Σ w| · 255 is within the bound of prepare_conv2d_q8.
    for (int64_t oc = 0; oc < p.cout_g; ++oc) corr[at + oc] *= factor;
  }
  for (int64_t oc = 0; oc < p.cout_g; ++oc) {
    const int64_t c_out = g * p.cout_g + oc;
    mult[at + oc] = s.x_scale * static_cast<double>(s.w_scales[c_out]);
    if (s.bias != nullptr) bias[at + oc] = s.bias[c_out];
  }
  if (c.q_mult == nullptr) return;
  const int64_t c0 = g * p.cout_g;
  p.k.out_params(s.w_scales + c0, s.bias != nullptr ? s.bias + c0 : nullptr, p.cout_g, p.cout_pad, s.x_scale,
                 s.out_scale, c.q_mult + at, c.q_bias + at);
}

// c's arrays (groups · cout_pad entries each; q_mult and q_bias with requantize_sums): kept
// with the instruction when the weight, its scales and the bias are program constants (*kept:
// the block, *ready: an earlier call derived them), else in temp memory (*kept null), for
// channel_params to fill.
Error channel_arrays(KernelContext& ctx, const Plan& p, bool requantize_sums, ChannelParams* c, void** kept,
                     bool* ready) {
  const ConvQ8Args& s = p.s;
  const int64_t n = s.groups * p.cout_pad;
  const size_t bytes = static_cast<size_t>(n) * (sizeof(double) + sizeof(int32_t) + sizeof(float) +
                                                 (requantize_sums ? 2 * sizeof(float) : 0)) +
                       (requantize_sums ? sizeof(int32_t) : 0);
  *kept = kept_arrays(ctx, s, p.k, requantize_sums, {s.groups, p.cout_g, p.cout_pad, p.cin_g, p.taps, p.steps},
                      bytes, ready);
  if (*kept != nullptr) {
    c->mult = static_cast<double*>(*kept);  // doubles first: every array stays aligned
    c->corr = reinterpret_cast<int32_t*>(c->mult + n);
    c->bias = reinterpret_cast<float*>(c->corr + n);
    c->q_mult = requantize_sums ? c->bias + n : nullptr;
    c->q_bias = requantize_sums ? c->bias + 2 * n : nullptr;
    c->q_in_range = requantize_sums ? reinterpret_cast<int32_t*>(c->bias + 3 * n) : nullptr;
    return Error::Ok;
  }
  Error e = temp_array(ctx, s.op, "channel corrections", n, &c->corr);
  if (e == Error::Ok) e = temp_array(ctx, s.op, "channel scales", n, &c->mult);
  if (e == Error::Ok) e = temp_array(ctx, s.op, "channel biases", n, &c->bias);
  if (e == Error::Ok && requantize_sums) e = temp_array(ctx, s.op, "output scales", n, &c->q_mult);
  if (e == Error::Ok && requantize_sums) e = temp_array(ctx, s.op, "output biases", n, &c->q_bias);
  return e;
}

// Weight blocks [b0, b1) (block = group * blocks + block of the group) of conv2d_q8's OIHW
// weight in the packed layout.
void pack_blocks(const Plan& p, int8_t* wp, int64_t b0, int64_t b1) {
  const int8_t* w = p.s.w;  // (groups · cout_g, cin_g, taps)
  int8_t* dst = wp + b0 * p.taps * p.steps * kPackBlock;
  for (int64_t blk = b0; blk < b1; ++blk) {
    const int64_t g = blk / p.blocks, oc0 = blk % p.blocks * kConvPackLanes;
    for (int64_t tap = 0; tap < p.taps; ++tap)
      for (int64_t c0 = 0; c0 < p.steps * kKc; c0 += kKc)
        for (int64_t oc = oc0; oc < oc0 + kConvPackLanes; ++oc)
          for (int64_t c = c0; c < c0 + kKc; ++c, ++dst)
            *dst = oc < p.cout_g && c < p.cin_g ? w[((g * p.cout_g + oc) * p.cin_g + c) * p.taps + tap] : int8_t{0};
  }
}

// Planes [u0, u1) of xq (plane = (batch item * groups + group) * steps + step: hp x wp pixels
// of 4 channels).
template <typename E>
void quantize_planes(const Plan& p, E* xq, int64_t u0, int64_t u1) {
  const ConvQ8Args& s = p.s;
  const InputQuant q = input_quant(s, p.k);
  const E pad = static_cast<E>(p.pad_value);
  const int64_t h = s.in[0], w = s.in[1], hp = p.hp, wp = p.wp, ph = s.pad[0], pw = s.pad[1];
  const float* src[kKc];
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t st = u % p.steps, g = u / p.steps % s.groups, n = u / p.steps / s.groups;
    E* plane = xq + u * hp * wp * kKc;
    std::fill(plane, plane + ph * wp * kKc, pad);
    std::fill(plane + (ph + h) * wp * kKc, plane + hp * wp * kKc, pad);
    for (int64_t ih = 0; ih < h; ++ih) {
      E* row = plane + (ph + ih) * wp * kKc;
      std::fill(row, row + pw * kKc, pad);
      std::fill(row + (pw + w) * kKc, row + wp * kKc, pad);
      for (int64_t j = 0; j < kKc; ++j) {
        const int64_t c = st * kKc + j;
        src[j] = c < p.cin_g ? s.x + ((n * s.c_in + g * p.cin_g + c) * h + ih) * w : nullptr;
      }
      p.k.quantize_row(src, w, q.scale, q.lo, q.hi, q.offset, p.pad_value, row + pw * kKc);
    }
  }
}

// n pixels of an int8 x's c values (q, quantized with zp) as pixels of c_pad stored
// elements: q - zp + offset, the rest pad. (__restrict: byte pointers may alias anything, and
// without it GCC leaves the loops scalar.)
template <typename E>
void convert_pixels(const int8_t* __restrict x, int64_t n, int64_t c, int64_t c_pad, int32_t delta, E pad,
                    E* __restrict out) {
  if (c == c_pad) {
    for (int64_t i = 0; i < n * c; ++i) out[i] = static_cast<E>(x[i] + delta);
    return;
  }
  for (int64_t p = 0; p < n; ++p, x += c, out += c_pad) {
    for (int64_t j = 0; j < c; ++j) out[j] = static_cast<E>(x[j] + delta);
    std::fill(out + c, out + c_pad, pad);
  }
}

// Padded rows [r0, r1) of a channels-last xq (row = batch item * hp + padded row).
template <typename E>
void quantize_rows(const Plan& p, E* xq, int64_t r0, int64_t r1) {
  const ConvQ8Args& s = p.s;
  const InputQuant q = input_quant(s, p.k);
  const E pad = static_cast<E>(p.pad_value);
  const int64_t h = s.in[0], w = s.in[1], ph = s.pad[0], pw = s.pad[1], row_size = p.wp * p.pixel;
  for (int64_t r = r0; r < r1; ++r) {
    E* row = xq + r * row_size;
    const int64_t n = r / p.hp, ih = r % p.hp - ph;
    if (ih < 0 || ih >= h) {
      std::fill(row, row + row_size, pad);
      continue;
    }
    std::fill(row, row + pw * p.pixel, pad);
    std::fill(row + (pw + w) * p.pixel, row + row_size, pad);
    if (s.x_q8 != nullptr) {
      const int32_t delta = q.offset - static_cast<int32_t>(s.zero_point);
      convert_pixels(s.x_q8 + (n * h + ih) * w * s.c_in, w, s.c_in, p.pixel, delta, pad, row + pw * p.pixel);
      continue;
    }
    p.k.quantize_pixels(s.x + (n * h + ih) * w * s.c_in, w, s.c_in, p.pixel, q.scale, q.lo, q.hi, q.offset,
                        p.pad_value, row + pw * p.pixel);
  }
}

// Where tile u of run's loop starts: batch item n, group g, output position p0 at (oy, ox).
// advance() moves on by a run of tiles (two divisions per run: per tile of a narrow layer,
// which is a few dozen instructions, three divisions showed in profiles).
struct TileCursor {
  int64_t n = 0, g = 0, p0 = 0, oy = 0, ox = 0;
  TileCursor(const ConvQ8Args& s, int64_t tiles, int mr, int64_t u) {
    const int64_t image = u / tiles;
    n = image / s.groups;
    g = image % s.groups;
    p0 = u % tiles * mr;
    oy = p0 / s.out[1];
    ox = p0 % s.out[1];
  }
  // k tiles on (all of the current image's but possibly the last).
  void advance(const ConvQ8Args& s, int mr, int64_t k) {
    p0 += k * mr;
    if (p0 >= s.out_plane()) {
      p0 = oy = ox = 0;
      if (++g == s.groups) g = 0, ++n;
      return;
    }
    oy = p0 / s.out[1];
    ox = p0 % s.out[1];
  }
};

// The first input pixel (tap 0) of each output position [at.p0, at.p0 + mr) of its tile;
// positions past the plane repeat its last one. Filled a run of an output row at a time
// (a loop of adds that vectorizes; one position at a time, with its row-end branch, it took
// 2.5% of an int8 MobileNetV2 forward).
template <typename E>
void fill_rows(const Plan& p, const E* xq, const TileCursor& at, int mr, const void** __restrict rows) {
  const ConvQ8Args& s = p.s;
  const E* image = xq + (at.n * s.groups + at.g) * p.steps * p.hp * p.wp * kKc;
  const int64_t row_step = s.stride[0] * p.wp * p.pixel, col_step = s.stride[1] * p.pixel;
  const int valid = static_cast<int>(std::min<int64_t>(mr, s.out_plane() - at.p0));
  const E* row = image + at.oy * row_step;
  int64_t ox = at.ox;
  for (int i = 0; i < valid;) {
    const int n = static_cast<int>(std::min<int64_t>(valid - i, s.out[1] - ox));
    const E* first = row + ox * col_step;
    for (int j = 0; j < n; ++j) rows[i + j] = first + j * col_step;
    i += n;
    ox = 0;
    row += row_step;
  }
  for (int i = valid; i < mr; ++i) rows[i] = rows[valid - 1];
}

// Points t at the weights of output channels [oc0, oc0 + tile nr) of group g.
void point_weights(const Plan& p, const int8_t* w, int64_t g, int64_t oc0, int lanes, ConvQ8Tile* t) {
  const int64_t block = p.taps * p.steps * kPackBlock;
  t->w = w + (g * p.blocks + oc0 / kConvPackLanes) * block + oc0 % kConvPackLanes * kConvPackQuad;
  t->vec_stride = lanes == kConvPackLanes ? block : lanes * kConvPackQuad;
  t->step_stride = kPackBlock;
}

// The tile for a group's output channels from oc0 on: the narrowest that takes all of them,
// else the widest. Tiles take at most 16 channels or whole blocks of 16, a block more than
// the next narrower one, so the tile's channels lie in the group's weight blocks (and the
// per-channel arrays, which cover them).
const ConvQ8TileFn& pick_tile(const Plan& p, int64_t oc0) {
  for (int i = 0; i < 2; ++i)
    if (p.tiles[i].nr >= p.cout_g - oc0) return p.tiles[i];
  return p.tiles[2];
}

template <typename E>
Error run(KernelContext& ctx, const Plan& p) {
  const ConvQ8Args& s = p.s;
  const char* op = s.op;
  const int mr = p.tiles[0].mr;  // every tile has the same
  const int64_t all_blocks = s.groups * p.blocks;
  const int64_t block_size = p.taps * p.steps * kPackBlock;
  const int64_t out_plane = s.out_plane(), tiles = (out_plane + mr - 1) / mr;
  const int64_t units = s.batch * s.groups * tiles;
  const int64_t slices = slice_count(ctx, units, mr * p.cout_g * p.cin_g * p.taps);
  const bool packed_here = !s.packed;
  E* xq = nullptr;
  int8_t* wp = nullptr;
  ChannelParams c;
  const void** rows = nullptr;
  int64_t* tap_offsets = nullptr;
  const int64_t planes = s.batch * s.groups * p.steps, plane_size = p.hp * p.wp * kKc;
  Error e = p.raw ? Error::Ok : temp_array(ctx, op, "the quantized input", planes * plane_size, &xq);
  if (p.raw) xq = const_cast<E*>(reinterpret_cast<const E*>(s.x_q8));  // read only
  if (e == Error::Ok && packed_here) e = temp_array(ctx, op, "the packed weight", all_blocks * block_size, &wp);
  const bool requantize_sums = s.y_q8 != nullptr && s.res == nullptr;
  void* kept = nullptr;
  bool params_ready = false;
  if (e == Error::Ok) e = channel_arrays(ctx, p, requantize_sums, &c, &kept, &params_ready);
  if (e == Error::Ok) e = temp_array(ctx, op, "tile input pointers", slices * kConvRunTiles * mr, &rows);
  if (e == Error::Ok) e = temp_array(ctx, op, "tap offsets", p.taps, &tap_offsets);
  if (e != Error::Ok) return e;
  int32_t in_range_here = 0;  // q_in_range when the arrays are not kept
  if (c.q_in_range == nullptr) c.q_in_range = &in_range_here;
  for (int64_t kh = 0, tap = 0; kh < s.k[0]; ++kh)
    for (int64_t kw = 0; kw < s.k[1]; ++kw, ++tap) tap_offsets[tap] = (kh * s.dil[0] * p.wp + kw * s.dil[1]) * p.pixel;
  // Channels-last with unit column dilation: a kernel row's taps are adjacent pixels, whose
  // steps lie side by side in xq as their weights do in the packed layout (tap-major). The
  // tile then takes one tap per kernel row of k_w · steps steps (the stem's 7x7 on one quad:
  // 7 taps of 7 steps, not 49 of 1).
  const bool merged = s.channels_last && s.dil[1] == 1;
  if (merged)
    for (int64_t kh = 0; kh < s.k[0]; ++kh) tap_offsets[kh] = kh * s.dil[0] * p.wp * p.pixel;
  const int8_t* w = packed_here ? wp : s.w;
  // Output rows that read whole input rows one after the other: the tiles step through the
  // positions without a table of pointers (filling one took 2% of an int8 MobileNetV2).
  const bool contiguous = s.stride[0] * p.wp == s.out[1] * s.stride[1];
  if (!p.raw && s.channels_last)
    ctx.parallel_for(s.batch * p.hp, grain_for(p.wp * p.pixel * 4),
                     [&](int64_t r0, int64_t r1) { quantize_rows(p, xq, r0, r1); });
  else if (!p.raw)
    ctx.parallel_for(planes, grain_for(plane_size * 4), [&](int64_t u0, int64_t u1) { quantize_planes(p, xq, u0, u1); });
  if (packed_here)
    ctx.parallel_for(all_blocks, grain_for(block_size * 4), [&](int64_t b0, int64_t b1) { pack_blocks(p, wp, b0, b1); });
  if (!params_ready) {
    ctx.parallel_for(s.groups, grain_for(p.cout_g * p.cin_g * p.taps), [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) channel_params(p, w, g, c);
    });
    if (requantize_sums)
      *c.q_in_range = requantized_in_range(c.q_mult, c.q_bias, s.groups * p.cout_pad, p.cin_g * p.taps);
    ctx.kept_ready(kept);
  }
  parallel_slices(ctx, units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    const void** table = rows + sl * kConvRunTiles * mr;
    ConvQ8Tile t;
    t.rows = table;
    t.tap_offsets = tap_offsets;
    t.taps = merged ? s.k[0] : p.taps;
    t.steps = merged ? s.k[1] * p.steps : p.steps;
    t.x_step = p.x_step;
    t.plane = out_plane;
    t.ldy = s.channels_last ? s.c_out : 0;
    t.lo = s.out_min;
    t.hi = s.out_max;
    t.q_scale = static_cast<float>(s.out_scale);
    t.q_lo = static_cast<float>(s.q_lo - s.out_zero_point);
    t.q_hi = static_cast<float>(s.q_hi - s.out_zero_point);
    t.q_zp = s.out_zero_point;
    t.q_in_range = requantize_sums && *c.q_in_range != 0;
    TileCursor at(s, tiles, mr, u0);
    for (int64_t u = u0; u < u1;) {
      // a run: up to kConvRunTiles consecutive tiles of the image, one call per channel tile
      const int64_t p0 = at.p0, n = at.n, g = at.g;
      const int64_t run = std::min({u1 - u, tiles - p0 / mr, kConvRunTiles});
      if (contiguous) {  // (1x1, stride 1, no padding: position p reads pixel p)
        t.rows = nullptr;
        t.row0 = xq + ((at.n * s.groups + at.g) * p.steps * p.hp * p.wp * kKc + at.p0 * s.stride[1] * p.pixel);
        t.row_step = s.stride[1] * p.pixel;
      } else {
        fill_rows(p, xq, at, static_cast<int>(run * mr), table);
      }
      t.tiles = static_cast<int>(run);
      t.rows_n = static_cast<int>(std::min<int64_t>(mr, out_plane - p0 - (run - 1) * mr));
      for (int64_t oc0 = 0; oc0 < p.cout_g;) {
        const ConvQ8TileFn& f = pick_tile(p, oc0);
        point_weights(p, w, g, oc0, f.lanes, &t);
        const int64_t ch = g * p.cout_pad + oc0;
        t.corr = c.corr + ch;
        t.mult = c.mult + ch;
        t.bias = c.bias + ch;
        t.q_mult = requantize_sums ? c.q_mult + ch : nullptr;
        t.q_bias = requantize_sums ? c.q_bias + ch : nullptr;
        const int64_t at = s.channels_last ? (n * out_plane + p0) * s.c_out + oc0
                                           : (n * s.c_out + g * p.cout_g + oc0) * out_plane + p0;
        t.y = s.y != nullptr ? s.y + at : nullptr;
        t.y_q8 = s.y_q8 != nullptr ? s.y_q8 + at : nullptr;
        t.res = s.res != nullptr ? s.res + at : nullptr;
        t.cols_n = static_cast<int>(std::min<int64_t>(f.nr, p.cout_g - oc0));
        f.fn(t);
        oc0 += f.nr;
      }
      u += run;
      at.advance(s, mr, run);
    }
  });
  return Error::Ok;
}

bool is_depthwise3x3(const ConvQ8Args& s) {
  return s.cin_g() == 1 && s.k[0] == 3 && s.k[1] == 3 && s.stride[0] == s.stride[1] &&
         (s.stride[0] == 1 || s.stride[0] == 2) && s.dil[0] == 1 && s.dil[1] == 1;
}

// Depthwise 3x3 through `dw` (see the top): per output plane, its input plane quantized to
// floats (x - zp), the exact integer sums, then the portable kernel's scaling.
Error run_depthwise(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, DwConv3x3Fn dw) {
  const int64_t in_plane = s.in_plane(), out_plane = s.out_plane(), planes = s.batch * s.c_out;
  const int64_t slices = slice_count(ctx, planes, out_plane * 9);
  float* xf = nullptr;
  Error e = temp_array(ctx, s.op, "a quantized input plane", slices * in_plane, &xf);
  if (e != Error::Ok) return e;
  const InputQuant q = input_quant(s, k);
  parallel_slices(ctx, planes, slices, [&](int64_t sl, int64_t p0, int64_t p1) {
    float* xp = xf + sl * in_plane;
    for (int64_t plane = p0; plane < p1; ++plane) {
      const int64_t n = plane / s.c_out, oc = plane % s.c_out, ic = oc / s.cout_g();
      const float* x = s.x + (n * s.c_in + ic) * in_plane;
      k.quantize_floats(x, in_plane, q.scale, q.lo, q.hi, xp);
      float w[9];
      for (int t = 0; t < 9; ++t) w[t] = static_cast<float>(s.w[oc * 9 + t]);
      float* y = s.y + plane * out_plane;
      dw(xp, s.in[0], s.in[1], w, 0.0f, s.stride[0], s.pad[0], s.pad[1], y, s.out[0], s.out[1]);
      const double m = s.x_scale * static_cast<double>(s.w_scales[oc]);
      const float b = s.bias != nullptr ? s.bias[oc] : 0.0f;
      for (int64_t i = 0; i < out_plane; ++i) {
        float v = static_cast<float>(static_cast<double>(y[i]) * m);
        if (s.bias != nullptr) v += b;
        y[i] = conv_q8_clamp(v, s.out_min, s.out_max);
      }
    }
  });
  return Error::Ok;
}

Error run_with(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, DwConv3x3Fn dw) {
  const int64_t cin_g = s.cin_g(), cout_g = s.cout_g();
  if (s.channels_last && s.groups != 1) return conv2d_q8_portable(ctx, s);
  if (cout_g < kMinTileChannels)
    return !s.channels_last && !s.packed && is_depthwise3x3(s) ? run_depthwise(ctx, s, k, dw)
                                                                : conv2d_q8_portable(ctx, s);
  const int32_t pad_value = k.elem_bytes == 1 ? static_cast<int32_t>(s.zero_point) + k.byte_offset : 0;
  // An int8 channels-last x without padding, in whole quads, is laid out as xq: the raw tiles
  // read it where it is.
  const bool raw = s.channels_last && s.x_q8 != nullptr && s.pad[0] == 0 && s.pad[1] == 0 && s.c_in % kKc == 0 &&
                   k.raw_tiles[0].fn != nullptr;
  const Plan p{s,
               k,
               raw ? k.raw_tiles : k.tiles,
               cin_g,
               cout_g,
               s.quads(),
               s.k_plane(),
               s.in[0] + 2 * s.pad[0],
               s.in[1] + 2 * s.pad[1],
               round_up(cout_g, kMaxNr),
               pad_value,
               s.blocks(),
               s.channels_last ? s.quads() * kKc : kKc,
               s.channels_last ? kKc : (s.in[0] + 2 * s.pad[0]) * (s.in[1] + 2 * s.pad[1]) * kKc,
               raw};
  return k.elem_bytes == 1 ? run<uint8_t>(ctx, p) : run<int16_t>(ctx, p);
}

}  // namespace

Error conv2d_q8_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, DwConv3x3Fn dw) {
  ConvQ8Args s;
  Error e = prepare_conv2d_q8(ctx, args, &s);
  return e != Error::Ok ? e : run_with(ctx, s, k, dw);
}

Error conv2d_q8_packed_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, DwConv3x3Fn dw) {
  ConvQ8Args s;
  Error e = prepare_conv2d_q8_packed(ctx, args, &s);
  return e != Error::Ok ? e : run_with(ctx, s, k, dw);
}

Error conv2d_q8_channels_last_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, const ConvF32Kernels& f) {
  ConvQ8Args s;
  Error e = prepare_conv2d_q8_channels_last(ctx, args, &s);
  if (e != Error::Ok) return e;
  return is_depthwise_cl(s) ? run_depthwise_cl(ctx, s, k, f) : run_with(ctx, s, k, nullptr);
}

}  // namespace detail
}  // namespace pocket
