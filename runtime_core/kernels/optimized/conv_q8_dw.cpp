// Driver of conv2d_q8_channels_last's depthwise case (conv_q8.cpp's top comment): any window
// of up to kMaxDwTaps taps, in bands of output rows shared among the threads. On an int8 x the
// i8 variants' dot products (VPDPBUSD, SDOT) run on input rows expanded so that a window
// row's taps sit in quads, four taps of a channel per lane (DwConvQ8Expand in ukernels.h);
// otherwise (the i16 variants, or a float32 x) the fp32 channels-last depthwise row function
// runs on the quantized values as floats, whose sums are exact.
#include <algorithm>
#include <cstring>

#include "../portable/parallel_util.h"
#include "conv_q8_parts.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

// Channels-last depthwise taps whose float sums stay exact: taps · 255 · 128 < 2^24.
constexpr int64_t kMaxDwTaps = (int64_t(1) << 24) / (255 * 128);

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

}  // namespace

bool is_depthwise_cl(const ConvQ8Args& s) {
  return s.channels_last && !s.packed && s.groups == s.c_in && s.c_out == s.c_in && s.k[0] <= kRowFnMaxRows &&
         s.k_plane() <= kMaxDwTaps;
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

}  // namespace detail
}  // namespace pocket
