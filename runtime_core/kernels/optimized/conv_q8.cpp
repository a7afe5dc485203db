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
// so the float sums are exact and the results identical. Channels-last depthwise (any window
// of up to kMaxDwTaps taps) on an int8 x runs the i8 variants' dot products (VPDPBUSD, SDOT):
// each input row expanded so that a window row's taps sit in quads, four taps of a channel per
// lane (DwConvQ8Expand in ukernels.h). Without them (the i16 variants), or on a float32 x, it
// runs the fp32 channels-last depthwise row function as above. Other such groups run the
// portable kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

// Output channels per group below which the portable kernel is faster.
constexpr int64_t kMinTileChannels = 4;
// Output channels of the widest tile; per-channel arrays hold a multiple of it per group.
constexpr int kMaxNr = 32;
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

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The arguments of conv_q8_quantize for x, and what the variant adds to the stored element.
struct InputQuant {
  float scale, lo, hi;
  int32_t offset;
};
InputQuant input_quant(const ConvQ8Args& s, const ConvQ8Kernels& k) {
  const int32_t offset = k.elem_bytes == 1 ? static_cast<int32_t>(s.zero_point) + k.byte_offset : 0;
  return {static_cast<float>(s.x_scale), static_cast<float>(-128 - s.zero_point),
          static_cast<float>(127 - s.zero_point), offset};
}

// The per-channel arrays of the tiles (entries g * cout_pad + oc; zero past cout_g).
struct ChannelParams {
  int32_t* corr = nullptr;
  double* mult = nullptr;
  float* bias = nullptr;
  float* q_mult = nullptr;  // an int8 y without a residual: q_mult, q_bias of conv_q8_requantize_sum
  float* q_bias = nullptr;
  int32_t* q_in_range = nullptr;  // kept with q_mult: one word, requantized_in_range of q_mult and q_bias
};

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

// Channels-last depthwise taps whose float sums stay exact: taps · 255 · 128 < 2^24.
constexpr int64_t kMaxDwTaps = (int64_t(1) << 24) / (255 * 128);

bool is_depthwise_cl(const ConvQ8Args& s) {
  return s.channels_last && !s.packed && s.groups == s.c_in && s.c_out == s.c_in && s.k[0] <= kRowFnMaxRows &&
         s.k_plane() <= kMaxDwTaps;
}

// Depthwise channels-last through the fp32 row function `f`, in bands of up to kBandRows
// output rows: a band's input rows quantized to floats (x - zp) into its slice's buffer; the
// weight as (k_h, k_w, c) floats, a zero bias and no clamp give the exact sums, which
// k.rescale scales per channel as the portable kernel (then bias, residual, clamp). The band
// buffer is the band's rows as an image of its own (padding shifted), so the scratch stays a
// few rows per thread and only the rows where bands meet are quantized twice. An int8 y
// without a residual is requantized from the sums in the row function's store (DwConvF32Row's
// y_q8); with one, each output row goes through a row of floats, then k.requantize.
constexpr int64_t kBandRows = 16;

// A depthwise output row (out_row values at y offset `at`) from its exact sums (in y, or a
// row of floats for an int8 y): scaled as the portable kernel does it (then bias, residual,
// clamp), and quantized for an int8 y.
void finish_sums(const ConvQ8Args& s, const ConvQ8Kernels& k, const double* mult, const float* bias, int64_t at,
                 int64_t out_row, float* sums) {
  k.rescale(sums, out_row, mult, bias, s.res != nullptr ? s.res + at : nullptr, s.out_min, s.out_max, sums);
  if (s.y_q8 != nullptr)
    k.requantize(sums, out_row, static_cast<float>(s.out_scale), static_cast<float>(-128 - s.out_zero_point),
                 static_cast<float>(127 - s.out_zero_point), s.out_zero_point, s.y_q8 + at);
}

// Output rows per band: up to kBandRows, in a number of bands per batch item that is a multiple
// of the threads (when there are more threads than bands of kBandRows, smaller bands: a 14x14
// layer is then two bands of 7, not one band on one thread).
int64_t band_rows(const KernelContext& ctx, const ConvQ8Args& s) {
  const int64_t t = ctx.num_threads(), h = s.out[0];
  const int64_t bands = std::min(h, (h + kBandRows - 1) / kBandRows + t - 1) / t * t;
  return std::max<int64_t>(1, (h + std::max<int64_t>(bands, 1) - 1) / std::max<int64_t>(bands, 1));
}

// The bands of the channels-last depthwise drivers: `rows` output rows per band (band_rows),
// unit u = batch item n's rows [oy0, oy1), which read the image's input rows [iy0, iy1);
// `in_rows` bounds iy1 - iy0 over the units (a slice's buffer).
struct DwBands {
  int64_t rows = 0, per_item = 0, units = 0, in_rows = 0;
  DwBands(const KernelContext& ctx, const ConvQ8Args& s) : rows(band_rows(ctx, s)) {
    per_item = (s.out[0] + rows - 1) / rows;
    units = s.batch * per_item;
    in_rows = std::min(s.in[0], (rows - 1) * s.stride[0] + (s.k[0] - 1) * s.dil[0] + 1);
  }
};
struct DwBand {
  int64_t n, oy0, oy1, iy0, iy1;
  DwBand(const ConvQ8Args& s, const DwBands& b, int64_t u)
      : n(u / b.per_item), oy0(u % b.per_item * b.rows), oy1(std::min(s.out[0], oy0 + b.rows)) {
    iy0 = std::max<int64_t>(0, oy0 * s.stride[0] - s.pad[0]);
    iy1 = std::min(s.in[0], (oy1 - 1) * s.stride[0] - s.pad[0] + (s.k[0] - 1) * s.dil[0] + 1);
  }
};

// The epilogue arrays of the channels-last depthwise drivers. An int8 y without residual is
// requantized by the row function from the sums: q_mult, q_bias (c_pad, zeros past c). Else
// finish_sums scales the sums: mult, bias (the channels' values repeated along an output row;
// bias null without one) and, for an int8 y, a row of floats per slice (rows).
struct DwEpilogue {
  bool requantize_sums = false;
  float* q_mult = nullptr;
  float* q_bias = nullptr;
  double* mult = nullptr;
  float* bias = nullptr;
  float* rows = nullptr;
  // kept: with requantize_sums, 2 · c_pad floats kept with the instruction for q_mult and
  // q_bias (null: temp memory), filled unless ready.
  Error make(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, int64_t c_pad, int64_t slices,
             float* kept = nullptr, bool ready = false) {
    const int64_t c = s.c_in, out_row = s.out[1] * c;
    requantize_sums = s.y_q8 != nullptr && s.res == nullptr;
    Error e = Error::Ok;
    if (requantize_sums) {
      q_mult = kept;
      q_bias = kept != nullptr ? kept + c_pad : nullptr;
      if (kept == nullptr) e = temp_array(ctx, s.op, "output scales", c_pad, &q_mult);
      if (e == Error::Ok && kept == nullptr) e = temp_array(ctx, s.op, "output biases", c_pad, &q_bias);
      if (e != Error::Ok) return e;
      if (!ready) k.out_params(s.w_scales, s.bias, c, c_pad, s.x_scale, s.out_scale, q_mult, q_bias);
      return Error::Ok;
    }
    e = temp_array(ctx, s.op, "channel scales", out_row, &mult);
    if (e == Error::Ok && s.bias != nullptr) e = temp_array(ctx, s.op, "channel biases", out_row, &bias);
    if (e == Error::Ok && s.y_q8 != nullptr) e = temp_array(ctx, s.op, "output rows", slices * out_row, &rows);
    if (e != Error::Ok) return e;
    for (int64_t i = 0; i < out_row; ++i) {  // each pixel repeats the channels
      mult[i] = s.x_scale * static_cast<double>(s.w_scales[i % c]);
      if (bias != nullptr) bias[i] = s.bias[i % c];
    }
    return Error::Ok;
  }
  // Output row `at` (out_row values) from the row function's sums in y (the fp32 path's y, or
  // the slice's row of floats): see finish_sums.
  float* sums_row(const ConvQ8Args& s, int64_t sl, int64_t at) const {
    const int64_t out_row = s.out[1] * s.c_in;
    return s.y_q8 != nullptr ? rows + sl * out_row : s.y + at;
  }
};

// The depthwise weight (c, k_h, k_w) as DwConvQ8Row's quads: wq[(i · quads + q) · c_pad + ch]
// holds taps 4q..4q+3 of kernel row i (0 past k_w and c), corr[ch] = pad_byte · Σ w (k.dw_sums).
// Words built in registers and written once (every call does this: the file keeps the plain
// weight).
void quad_weights(const ConvQ8Args& s, const ConvQ8Kernels& k, int64_t c_pad, int32_t pad_byte,
                  uint32_t* __restrict wq, int32_t* __restrict corr) {
  const int64_t c = s.c_in, k_h = s.k[0], k_w = s.k[1], quads = (k_w + 3) / 4, taps = k_h * k_w;
  const int8_t* __restrict w = s.w;
  for (int64_t i = 0; i < k_h; ++i)
    for (int64_t q = 0; q < quads; ++q) {
      uint32_t* __restrict out = wq + (i * quads + q) * c_pad;
      const int64_t j0 = 4 * q, n = std::min<int64_t>(4, k_w - j0);
      // Byte b of a word is tap j0 + b (little-endian: its b-th byte in memory): four bytes
      // read as one word, the taps past k_w masked off; the last channel's word would read past
      // the weight, so its bytes are read one by one.
      const uint32_t mask = n == 4 ? ~0u : (1u << (8 * n)) - 1;
      const int8_t* tap = w + i * k_w + j0;
      for (int64_t ch = 0; ch + 1 < c; ++ch, tap += taps) {
        uint32_t word;
        std::memcpy(&word, tap, 4);
        out[ch] = word & mask;
      }
      uint32_t last = 0;  // c >= 1: depthwise, c = groups
      for (int64_t b = 0; b < n; ++b) last |= static_cast<uint32_t>(static_cast<uint8_t>(tap[b])) << (8 * b);
      out[c - 1] = last;
      std::fill(out + c, out + c_pad, 0u);
    }
  k.dw_sums(wq, k_h * quads, c_pad, corr);
  for (int64_t ch = 0; ch < c_pad; ++ch) corr[ch] *= pad_byte;
}

// Depthwise channels-last on an int8 x through the i8 variant's dot products (k.dw_expand,
// k.dw_row; see DwConvQ8Expand in ukernels.h), in bands as above: a band's input rows are
// expanded into its slice's buffer, kernel rows outside the image read a padding row (every
// tap the zero point), so the sums need no edge cases. The epilogue is the fp32 path's.
Error run_depthwise_cl_q8(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k) {
  const int64_t c = s.c_in, c_pad = round_up(c, k.dw_lanes), quads = (s.k[1] + 3) / 4;
  const int64_t row_words = s.out[1] * quads * c_pad, out_row = s.out[1] * c;
  const DwBands bands(ctx, s);
  const int64_t slices = slice_count(ctx, bands.units, bands.rows * out_row * s.k_plane());
  uint32_t* expanded = nullptr;  // per slice: bands.in_rows rows, then the padding row
  uint32_t* wq = nullptr;        // the weight's quads, (k_h, quads, c_pad) words
  int32_t* corr = nullptr;
  int8_t* pad_pixel = nullptr;
  DwEpilogue ep;
  // The weight's quads, corr and (requantizing) q_mult, q_bias: kept with the instruction when
  // the weight, its scales and the bias are program constants.
  const bool requantize_sums = s.y_q8 != nullptr && s.res == nullptr;
  const int64_t wq_words = s.k[0] * quads * c_pad, q_words = requantize_sums ? 2 * c_pad + 1 : 0;
  bool ready = false;
  auto* kept = static_cast<uint32_t*>(kept_arrays(ctx, s, k, requantize_sums, {c, s.k[0], s.k[1]},
                                                  static_cast<size_t>(wq_words + c_pad + q_words) * sizeof(uint32_t),
                                                  &ready));
  Error e = temp_array(ctx, s.op, "expanded input rows", slices * (bands.in_rows + 1) * row_words, &expanded);
  if (kept != nullptr) {
    wq = kept;
    corr = reinterpret_cast<int32_t*>(kept + wq_words);
  }
  if (e == Error::Ok && kept == nullptr) e = temp_array(ctx, s.op, "the weight in quads", wq_words, &wq);
  if (e == Error::Ok && kept == nullptr) e = temp_array(ctx, s.op, "channel corrections", c_pad, &corr);
  if (e == Error::Ok) e = temp_array(ctx, s.op, "a padding pixel", c, &pad_pixel);
  float* kept_q = kept != nullptr && requantize_sums ? reinterpret_cast<float*>(kept + wq_words + c_pad) : nullptr;
  int32_t in_range_here = 0;  // q_in_range (the word after q_mult and q_bias when kept)
  int32_t* in_range = kept_q != nullptr ? reinterpret_cast<int32_t*>(kept_q + 2 * c_pad) : &in_range_here;
  if (e == Error::Ok) e = ep.make(ctx, s, k, c_pad, slices, kept_q, ready);
  if (e != Error::Ok) return e;
  if (!ready) quad_weights(s, k, c_pad, static_cast<int32_t>(s.zero_point) + k.byte_offset, wq, corr);
  if (!ready && requantize_sums) *in_range = requantized_in_range(ep.q_mult, ep.q_bias, c_pad, s.k_plane());
  ctx.kept_ready(kept);
  std::fill(pad_pixel, pad_pixel + c, static_cast<int8_t>(s.zero_point));
  parallel_slices(ctx, bands.units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    uint32_t* buf = expanded + sl * (bands.in_rows + 1) * row_words;
    uint32_t* pad_row = buf + bands.in_rows * row_words;
    DwConvQ8Expand x;
    x.pad_pixel = pad_pixel;
    x.c = c;
    x.c_pad = c_pad;
    x.in_w = s.in[1];
    x.out_w = s.out[1];
    x.k_w = s.k[1];
    x.quads = quads;
    x.stride = s.stride[1];
    x.pad = s.pad[1];
    x.dil = s.dil[1];
    x.offset = static_cast<uint8_t>(k.byte_offset);
    x.x = pad_pixel;  // the padding row: every column outside (in_w 0)
    x.in_w = 0;
    x.out = pad_row;
    k.dw_expand(x);
    x.in_w = s.in[1];
    const uint32_t* kernel_rows[kRowFnMaxRows];
    DwConvQ8Row r;
    r.rows = kernel_rows;
    r.w = reinterpret_cast<const int8_t*>(wq);
    r.corr = corr;
    r.c = c;
    r.c_pad = c_pad;
    r.out_w = s.out[1];
    r.quads = quads;
    r.k_h = s.k[0];
    r.q_mult = ep.q_mult;
    r.q_bias = ep.q_bias;
    r.lo = static_cast<float>(s.q_lo - s.out_zero_point);
    r.hi = static_cast<float>(s.q_hi - s.out_zero_point);
    r.q_zp = s.out_zero_point;
    r.q_in_range = requantize_sums && *in_range != 0;
    for (int64_t u = u0; u < u1; ++u) {
      const DwBand b(s, bands, u);
      for (int64_t iy = b.iy0; iy < b.iy1; ++iy) {
        x.x = s.x_q8 + (b.n * s.in[0] + iy) * s.in[1] * c;
        x.out = buf + (iy - b.iy0) * row_words;
        k.dw_expand(x);
      }
      for (int64_t oy = b.oy0; oy < b.oy1; ++oy) {
        for (int64_t i = 0; i < s.k[0]; ++i) {
          const int64_t iy = oy * s.stride[0] - s.pad[0] + i * s.dil[0];
          kernel_rows[i] = iy >= b.iy0 && iy < b.iy1 ? buf + (iy - b.iy0) * row_words : pad_row;
        }
        const int64_t at = (b.n * s.out[0] + oy) * out_row;
        if (ep.requantize_sums) {
          r.y_q8 = s.y_q8 + at;
          k.dw_row(r);
          continue;
        }
        r.y_q8 = nullptr;
        r.y = ep.sums_row(s, sl, at);
        k.dw_row(r);
        finish_sums(s, k, ep.mult, ep.bias, at, out_row, r.y);
      }
    }
  });
  return Error::Ok;
}

Error run_depthwise_cl(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, const ConvF32Kernels& f) {
  if (k.dw_row != nullptr && s.x_q8 != nullptr) return run_depthwise_cl_q8(ctx, s, k);
  const int64_t c = s.c_in, taps = s.k_plane(), in_row = s.in[1] * c, out_row = s.out[1] * c;
  const DwBands bands(ctx, s);
  const int64_t slices = slice_count(ctx, bands.units, bands.rows * out_row * taps);
  float* xf = nullptr;
  float* wf = nullptr;
  float* zeros = nullptr;
  DwEpilogue ep;  // q_mult and q_bias padded to whole vectors (the row function reads them)
  Error e = temp_array(ctx, s.op, "quantized input rows", slices * bands.in_rows * in_row, &xf);
  if (e == Error::Ok) e = temp_array(ctx, s.op, "the weight as floats", taps * c, &wf);
  if (e == Error::Ok) e = temp_array(ctx, s.op, "a zero bias", c, &zeros);
  if (e == Error::Ok) e = ep.make(ctx, s, k, round_up(c, kMaxNr), slices);
  if (e != Error::Ok) return e;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t t = 0; t < taps; ++t) wf[t * c + ch] = static_cast<float>(s.w[ch * taps + t]);
    zeros[ch] = 0.0f;
  }
  const InputQuant q = input_quant(s, k);
  parallel_slices(ctx, bands.units, slices, [&](int64_t sl, int64_t u0, int64_t u1) {
    float* buf = xf + sl * bands.in_rows * in_row;
    DwConvF32Row r;
    set_window(s, c, &r);  // in_h and pad[0] are the band's, below
    r.w = wf;
    r.bias = zeros;
    r.x = buf;
    if (ep.requantize_sums) {
      r.q_mult = ep.q_mult;
      r.q_bias = ep.q_bias;
      r.q_zp = s.out_zero_point;
      r.lo = static_cast<float>(s.q_lo - s.out_zero_point);
      r.hi = static_cast<float>(s.q_hi - s.out_zero_point);
    }
    for (int64_t u = u0; u < u1; ++u) {
      const DwBand b(s, bands, u);
      const int64_t first = (b.n * s.in[0] + b.iy0) * in_row, count = std::max<int64_t>(0, b.iy1 - b.iy0) * in_row;
      if (s.x_q8 != nullptr)
        k.int8_floats(s.x_q8 + first, count, static_cast<int32_t>(s.zero_point), buf);
      else if (count > 0)
        k.quantize_floats(s.x + first, count, q.scale, q.lo, q.hi, buf);
      r.in_h = std::max<int64_t>(0, b.iy1 - b.iy0);
      r.pad[0] = s.pad[0] + b.iy0;  // row iy of the image is row iy - iy0 of buf
      for (int64_t oy = b.oy0; oy < b.oy1; ++oy) {
        const int64_t at = (b.n * s.out[0] + oy) * out_row;
        r.oy = oy;
        if (ep.requantize_sums) {
          r.y_q8 = s.y_q8 + at;
          f.dw_row(r);
          continue;
        }
        r.y = ep.sums_row(s, sl, at);
        f.dw_row(r);
        finish_sums(s, k, ep.mult, ep.bias, at, out_row, r.y);
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
