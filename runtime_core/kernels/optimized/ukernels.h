// Microkernel interfaces: what each ISA file (<op>_<variant>_<isa>.cpp, see optimized.h)
// provides, and the ISA-independent drivers (gemm.cpp, conv.cpp, linear_q.cpp, sdpa.cpp)
// call. A microkernel computes one block of an op's output single-threaded; the drivers
// check arguments (through kernels/portable/parts.h), split the work over the thread pool
// and fall back to the portable computation for the cases the microkernels do not cover.
#pragma once

#include <cstdint>
#include <type_traits>  // linear_qp_tile.inc

#include "../portable/llm_util.h"
#include "../portable/parts.h"
#include "../portable/util.h"  // POCKET_UNROLL

namespace pocket {
namespace detail {

// ---- fp32 matrix products (gemm_f32_<isa>.cpp)

// "nt": C[i, j] = bias[j] (0 without bias) + Σ_p A[i*lda + p] · B[j*ldb + p], for i < m,
// j < n, C[i*ldc + j]. Rows of A and B contiguous: x · wᵀ of aten::linear, mm with a
// transposed right operand.
using GemmNtFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                          int64_t ldb, const float* bias, float* c, int64_t ldc);
// "nn": C[i, j] = bias[i] (0 without bias) + Σ_p A[i*a_rs + p*a_cs] · B[p*ldb + j]. Rows of
// B contiguous: mm, convolutions (A the weight, B the input plane or its im2col columns).
using GemmNnFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
                          const float* b, int64_t ldb, const float* bias, float* c, int64_t ldc);

struct GemmKernels {
  GemmNtFn nt;
  GemmNnFn nn;
  int nt_mr, nt_nr;  // register tile of nt (rows of A, rows of B)
  int nn_mr, nn_nr;  // register tile of nn (rows of A, columns of B)
};

// ---- depthwise 3x3 convolution, float32 (dwconv3x3_f32_<isa>.cpp)

// One channel: y (oh, ow) = bias + Σ_{i,j<3} w[i*3 + j] · x[oh*stride + i - pad_h,
// ow*stride + j - pad_w] (x (ih, iw), zero outside), stride 1 or 2, dilation 1.
using DwConv3x3Fn = void (*)(const float* x, int64_t ih, int64_t iw, const float* w, float bias,
                             int64_t stride, int64_t pad_h, int64_t pad_w, float* y, int64_t oh, int64_t ow);

// One output of a DwConv3x3Fn with bounds checks (for the columns at a row's edges):
// rows[kh] is input row oy*stride - pad_h + kh (null when outside), ix0 the first tap's x.
inline float dwconv3x3_column(const float* const rows[3], const float* w, float bias, int64_t ix0, int64_t iw) {
  float acc = bias;
  for (int kh = 0; kh < 3; ++kh) {
    if (rows[kh] == nullptr) continue;
    for (int kw = 0; kw < 3; ++kw) {
      const int64_t ix = ix0 + kw;
      if (ix >= 0 && ix < iw) acc += w[kh * 3 + kw] * rows[kh][ix];
    }
  }
  return acc;
}

// ---- pocket::linear_q

// fp32 activations (linear_q_f32_<isa>.cpp).
//   gemv: y[r*ldy + c] = bias[c] + x_r · dequantize(w row c) for r < m (m <= 4), c in
//         [c0, c1). x rows are k floats apart; for 4-bit weights each row of x is permuted
//         by permute_x first. Needs group_size % 16 == 0.
//   dequantize: rows [r0, r1) of w as floats (r1 - r0, k), rounded exactly as the
//         reference (q * scale, then + min, never fused).
//   permute_x: a row of k columns (k % 16 == 0), each 16 in the order in which the ISA's
//         gemv unpacks the nibbles of 8 packed bytes.
struct LinearQF32Kernels {
  void (*gemv)(const float* x, int64_t m, const QuantWeight& w, int64_t c0, int64_t c1, const float* bias,
               float* y, int64_t ldy);
  void (*dequantize)(const QuantWeight& w, int64_t r0, int64_t r1, float* out);
  void (*permute_x)(const float* x, int64_t k, float* out);
};

// int8 activations (linear_q_i8_<isa>.cpp), act_mode 1 or 2, group_size % 32 == 0.
//
// x is quantized once per call (bit-exact with the portable kernel) to xq (m, k) int8; for
// 4-bit weights each block of 32 columns is permuted to [even columns, odd columns] so that
// 16 packed bytes (low nibbles, then high nibbles) line up with it. A microkernel computes
// with exact integer dot products of xq and the weight's stored values u (nibbles, int8 or
// uint8, possibly offset: Σ xq·q = Σ xq·u - offset·Σ xq), then scales in double:
//   act_mode 1: y = sx[r] · (Σ_groups scale·Σxq·u  +  Σ_groups corr·xs[r, group])
//   act_mode 2: y = Σ_blocks sx[r, b]·scale·Σxq·u  +  Σ_groups corr·xs[r, group]
// with corr = min - offset·scale (per weight row and group) and xs the driver's per-group
// sums of xq (act_mode 1) or of sx·Σxq over the group's blocks (act_mode 2), stored with
// the rows of x contiguous (xst) so a tile loads its rows' values together.
struct LinearQI8Problem {
  QuantWeight w;
  const int8_t* xq = nullptr;   // (m, k)
  const float* sx = nullptr;    // act_mode 1: (m); act_mode 2: (m, k / 32)
  const double* sxt = nullptr;  // act_mode 2: sx transposed, (k / 32, m)
  const double* xst = nullptr;  // (groups, m): xs transposed (rows of x contiguous)
  const float* bias = nullptr;
  float* y = nullptr;          // (m, n)
  int64_t m = 0, k = 0, n = 0;
  int act_mode = 1;
};

// pocket::linear_q_packed (linear_qp_i8_<isa>.cpp over linear_qp_tile.inc): 4- or 8-bit
// weights packed 16 output channels across vector lanes (QuantWeight::packed), int8
// activations. A tile computes mr rows of x times one block of 16 channels. Per step of 8
// columns, 64 bytes (4-bit: low nibbles 4 columns of each channel, high nibbles the next 4)
// or 128 bytes (8-bit) give two 4-way dot products per lane against 4 broadcast activation
// bytes each, no horizontal sums. Per span of columns (a group in act_mode 1, a block of 32
// in act_mode 2) the exact int32 sums become float32 (exact: |Σ xq·q| < 2^24 as a span has at
// most 8192 columns of 4-bit or 1024 of 8-bit weights):
//   acc += float(Σ xq·u - offset·xs) · (scale · f)  [+ min · (xs · f)]
// u the ISA's operand value (q = u - offset), xs the span's Σ xq, f 1 (act_mode 1) or the
// block's activation scale (act_mode 2); then y = acc · sx[row] (act_mode 1) + bias.
// Float32 accumulation over spans, as the other engines do (the unpacked kernels sum in double).
struct LinearQPProblem {
  QuantWeight w;                // packed, 4-bit
  const int8_t* xq = nullptr;   // (m, k)
  const int32_t* xs = nullptr;  // (m, spans): Σ xq per span
  const float* sx = nullptr;    // act_mode 1: (m); act_mode 2: (m, spans)
  const float* bias = nullptr;
  float* y = nullptr;           // (m, n)
  int64_t m = 0, k = 0, n = 0, span = 0, spans = 0;
  int act_mode = 1;
};
// The weight formats a linear_qp tile is instantiated for: (bits, symmetric).
enum LinearQPFormat { kQp4Sym, kQp4Asym, kQp8Sym, kQp8Asym };
constexpr bool qp_asym(int f) { return f == kQp4Asym || f == kQp8Asym; }
constexpr int qp_bits(int f) { return f == kQp4Sym || f == kQp4Asym ? 4 : 8; }

struct LinearQPKernels {
  // y[:, 16·b0 : 16·b1) for all m rows.
  void (*run)(const LinearQPProblem& p, int64_t b0, int64_t b1);
  // One row x of k floats quantized as quantize_activations does (quant_util.h), the values
  // as int8: xq (k), sx (k / scale_cols scales), xs (k / span sums of xq); scale_cols and span
  // divide k and are multiples of 8 (linear_q_packed's k and group size are). Null: the driver
  // quantizes through the portable code.
  void (*quantize_row)(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                       int32_t* xs);
};

struct LinearQI8Kernels {
  // y[:, c0:c1) for all m rows.
  void (*run)(const LinearQI8Problem& p, int64_t c0, int64_t c1);
  // The weight offset the microkernel uses for a format (bits, symmetric).
  int (*offset)(int bits, bool symmetric);
  const LinearQPKernels* packed;  // pocket::linear_q_packed
};

// ---- pocket::conv2d_q8, conv2d_q8_packed, conv2d_q8_channels_last (conv_q8_<variant>_<isa>.cpp):
// an indirect GEMM over
// the quantized input (the driver, conv_q8.cpp, makes the layouts). A tile computes mr output
// positions x nr output channels of one group: for each kernel tap, rows[i] + tap_offsets[tap]
// points at position i's input pixel for that tap, 4 channels (a step), the next step x_step
// elements on.
// Weights: int8 in the file's packed layout (conv2d_q8_packed; blocks of 16 channels, per tap
// and step of 4 input channels each channel's quad: ConvQ8Args), vector v (kLanes channels)
// at v * vec_stride, step s at s * step_stride, zero past the group's channels.
// Inputs per variant:
//   i16: int16 x - zp (in [-255, 255]); no correction
//   i8:  bytes xq + byte_offset (xq in [-128, 127]; VPDPBUSD's unsigned operand takes 128,
//        SDOT's signed one 0); Σ (x - zp)·w = Σ byte·w - corr with corr = (zp +
//        byte_offset)·Σ w per output channel, the padding being zp + byte_offset
// Sums are exact in int32 (prepare_conv2d_q8 bounds the products per output), then as the
// portable kernel: y = clamp(float(double(acc - corr) · mult) + bias, lo, hi) per channel.
struct ConvQ8Tile {
  const void* const* rows = nullptr;       // [tiles · mr]: each position's input at tap 0, or null:
  const void* row0 = nullptr;              //   position i's at row0 + i · row_step elements (i past
  int64_t row_step = 0;                    //   the call's positions: its last one's)
  const int64_t* tap_offsets = nullptr;    // [taps], in elements
  const void* w = nullptr;                 // the block's weights
  int64_t vec_stride = 0, step_stride = 0;  // in elements
  int64_t x_step = 0;                      // input elements between steps
  int64_t taps = 0, steps = 0;             // steps = quads of input channels
  const int32_t* corr = nullptr;           // (nr) for this block (zeros for i16)
  const double* mult = nullptr;            // (nr): x_scale · w_scale
  const float* bias = nullptr;             // (nr): zeros without bias
  float lo = -INFINITY, hi = INFINITY;     // output clamp
  float* y = nullptr;                      // y[j * plane + i]: output channel j, position i
  int64_t plane = 0;
  int64_t ldy = 0;                         // not 0: channels-last, y[i * ldy + j] (plane unused)
  const float* res = nullptr;              // channels-last: added before the clamp, as y
  int8_t* y_q8 = nullptr;                  // channels-last int8 output (y null), as y:
  const float* q_mult = nullptr;           //   without res conv_q8_requantize_sum(acc - corr,
  const float* q_bias = nullptr;           //   q_mult, q_bias, q_lo, q_hi, q_zp) per channel (nr);
  float q_lo = 0, q_hi = 0;                //   with res the float y quantized with q_scale
  float q_scale = 1;
  int32_t q_zp = 0;
  bool q_in_range = false;                 // every sum · q_mult + q_bias is a number well inside
                                           //   int32 (requantized_in_range): no clamp before
                                           //   the conversion to integers
  int tiles = 1;                           // tiles of mr positions, as ConvF32Tile's
  int rows_n = 0, cols_n = 0;              // positions of the last tile, channels (<= mr, nr)
};
struct ConvQ8TileFn {
  void (*fn)(const ConvQ8Tile& t);
  int mr, nr, lanes;  // lanes: output channels per vector
};
// One input row of 4 channels to pixels of 4 stored elements: out[iw * 4 + j] =
// conv_q8_quantize(src[j][iw], scale, lo, hi) + offset, or pad where src[j] is null.
using ConvQ8RowFn = void (*)(const float* const* src, int64_t w, float scale, float lo, float hi, int32_t offset,
                             int32_t pad, void* out);
// out[i] = float(conv_q8_quantize(x[i], scale, lo, hi)) for i < n.
using ConvQ8FloatsFn = void (*)(const float* x, int64_t n, float scale, float lo, float hi, float* out);
// n channels-last pixels of c floats to pixels of c_pad stored elements (c_pad >= c, a
// multiple of 4): out[p * c_pad + j] = conv_q8_quantize(x[p * c + j], ...) + offset, or pad
// for j >= c.
using ConvQ8PixelsFn = void (*)(const float* x, int64_t n, int64_t c, int64_t c_pad, float scale, float lo,
                                float hi, int32_t offset, int32_t pad, void* out);
// Channels-last int8 depthwise through the i8 variants' dot products (conv_q8_dw.cpp's
// run_depthwise_cl_q8): a window row's taps go in quads (4 taps of one channel per dot-product
// lane), so an input row is first expanded to hold, for each output column, its quads side by
// side, in groups of L = dw_lanes channels (a vector's): word
// out[ch / L · gs + (ox · quads + q) · L + ch % L], gs = out_w · quads · L, has byte b =
// channel ch of column ox·stride - pad + (4q + b)·dil, XOR offset (the variant's byte_offset,
// 0 or 128). A group's vectors for successive columns are then a fixed L · quads words apart
// (the row function's loads take constant offsets). Columns outside the row and taps 4q + b
// >= k_w read pad_pixel (c bytes of the zero point; those taps' weights are 0); channels
// [c, c_pad) are 0 (c_pad: c rounded up to L).
// One word of it: the bytes a, b, c, d (low to high) XOR offset, for the traits' scalar tails.
inline uint32_t dw_quad_word(int8_t a, int8_t b, int8_t c, int8_t d, uint8_t offset) {
  return (uint32_t{static_cast<uint8_t>(a)} | uint32_t{static_cast<uint8_t>(b)} << 8 |
          uint32_t{static_cast<uint8_t>(c)} << 16 | uint32_t{static_cast<uint8_t>(d)} << 24) ^
         (offset * 0x01010101u);
}
struct DwConvQ8Expand {
  const int8_t* x = nullptr;          // the input row (in_w, c)
  const int8_t* pad_pixel = nullptr;  // (c)
  uint32_t* out = nullptr;            // (out_w, quads, c_pad)
  int64_t c = 0, c_pad = 0, in_w = 0, out_w = 0, k_w = 0, quads = 0, stride = 1, pad = 0, dil = 1;
  uint8_t offset = 0;
};
// One output row: per channel Σ over kernel rows i and quads q of dot(rows[i]'s quad, w's),
// minus corr, stored as conv_q8_requantize_sum (y_q8) or as the exact sums in floats (y).
struct DwConvQ8Row {
  const uint32_t* const* rows = nullptr;  // [k_h]: kernel row i's expanded input row
  const int8_t* w = nullptr;              // (k_h, quads, c_pad, 4), 0 past k_w and c
  const int32_t* corr = nullptr;          // (c_pad): (zero point + offset) · Σ w per channel
  int64_t c = 0, c_pad = 0, out_w = 0, quads = 0, k_h = 0;
  int8_t* y_q8 = nullptr;                 // (out_w, c), or null: y
  const float* q_mult = nullptr;          // (c_pad) with y_q8
  const float* q_bias = nullptr;
  float lo = 0, hi = 0;
  int32_t q_zp = 0;
  bool q_in_range = false;                // as ConvQ8Tile's
  float* y = nullptr;                     // (out_w, c) sums
};
struct ConvQ8Kernels {
  int elem_bytes;   // 2 (i16) or 1 (i8)
  int byte_offset;  // i8: added to xq (128 or 0)
  ConvQ8RowFn quantize_row;
  ConvQ8FloatsFn quantize_floats;
  ConvQ8PixelsFn quantize_pixels;
  // Σ w per output channel of packed weight blocks: sums[b * 16 + j] (blocks, steps = taps ·
  // quads), for the i8 variants' correction (every i8 variant has it); null for i16.
  void (*weight_sums)(const int8_t* w, int64_t blocks, int64_t steps, int32_t* sums);
  // n exact sums (acc, may be y) to y = clamp(float(double(acc) · mult) + bias + res, lo, hi),
  // bias and res optional (null); mult and bias hold each value's channel's (channels-last
  // rows: the per-channel values repeated per pixel).
  void (*rescale)(const float* acc, int64_t n, const double* mult, const float* bias, const float* res, float lo,
                  float hi, float* y);
  // out[i] = conv_q8_requantize(y[i], scale, lo, hi, zp) for i < n: an int8 output.
  void (*requantize)(const float* y, int64_t n, float scale, float lo, float hi, int32_t zp, int8_t* out);
  // out[i] = float(x[i] - zp) for i < n: an int8 input's values for the fp32 depthwise path.
  void (*int8_floats)(const int8_t* x, int64_t n, int32_t zp, float* out);
  // The tiles of 1, 2 and 3 vector blocks of output channels (same mr; a variant with fewer
  // repeats its widest: AVX-512 VNNI 16/32/48 channels, NEON dot product 8/16/16, the i16
  // variants one tile); conv_q8.cpp's pick_tile chooses per group of output channels.
  ConvQ8TileFn tiles[3];
  // Channels-last depthwise on an int8 x (DwConvQ8Expand, DwConvQ8Row; c_pad a multiple of
  // the vector's lanes, at most 16); null (the i16 variants): through the fp32 row function.
  void (*dw_expand)(const DwConvQ8Expand& e);
  void (*dw_row)(const DwConvQ8Row& r);
  int dw_lanes;
  // Tiles that read a channels-last int8 x as it is (no padding, whole quads: its layout is
  // xq's), adding byte_offset as they broadcast; fn null (the i16 variants): none.
  ConvQ8TileFn raw_tiles[3];
  // q_mult[i] = conv_q8_out_mult, q_bias[i] = conv_q8_out_bias (0 without bias) of n channels
  // whose w_scales and bias (may be null) start at channel 0; zeros in [n, n_pad).
  void (*out_params)(const float* w_scales, const float* bias, int64_t n, int64_t n_pad, double x_scale,
                     double out_scale, float* q_mult, float* q_bias);
  // Σ w per channel of DwConvQ8Row's weight (rows = k_h · quads rows of c_pad words); with
  // dw_row, else null.
  void (*dw_sums)(const uint32_t* wq, int64_t rows, int64_t c_pad, int32_t* sums);
};

// ---- pocket::conv2d_packed (conv_f32_<isa>.cpp over conv_f32_tile.inc; driver conv_packed.cpp):
// channels-last float32 convolution, weights in the file's packed layout (ConvPackedArgs).
// Groups 1, an indirect GEMM: a tile computes mr output positions x nr output channels (1, 2
// or 3 blocks of 16); for each kernel tap, rows[i] + tap_offsets[tap] points at position i's
// input pixel (c_in floats of the zero-padded input). Per tap and input channel the block's 16
// weights are one row of its panel (no packing at run time), broadcast inputs times weight
// vectors, no horizontal sums. Epilogue: y = clamp(acc + bias + res, lo, hi) (max, then min;
// a NaN stays NaN), y and res rows ldy floats apart. One call runs `tiles` tiles of mr
// positions one after the other, tile k's rows k · mr further on in rows, y and res: the
// call's setup is paid once (on Zen 5, 5-10% of a 1x1 layer's time at c_in 8-16).
struct ConvF32Tile {
  const float* const* rows = nullptr;    // [tiles · mr]: each position's first input pixel, or null:
  const float* row0 = nullptr;           //   position i's at row0 + i · row_step floats (i past the
  int64_t row_step = 0;                  //   call's positions: its last one's)
  const int64_t* tap_offsets = nullptr;  // [taps], in floats: a tap's pixel = rows[i] + offset
  const float* w = nullptr;              // the first block's panel (taps, c_in, 16)
  int64_t block_stride = 0;              // floats from one block's panel to the next
  int64_t taps = 0, c_in = 0;
  const float* bias = nullptr;           // (nr): zeros past c_out or without bias
  const float* res = nullptr;            // null: no residual
  float lo = -INFINITY, hi = INFINITY;
  float* y = nullptr;
  int64_t ldy = 0;
  int tiles = 1;
  int rows_n = 0, cols_n = 0;  // positions of the last tile and channels to store (<= mr, nr)
};
// The input of a convolution tile's MR positions (ConvQ8Tile, ConvF32Tile): x[i] = position
// i's first element + offset, from rows or from row0 and row_step (positions past rows_n at
// the last one); next_tile_positions moves on to the next tile's MR positions.
template <typename E, int MR, class Tile>
__attribute__((always_inline)) inline void tile_positions(const Tile& t, int64_t offset, const E* (&x)[MR]) {
  if (t.rows != nullptr)
    POCKET_UNROLL for (int i = 0; i < MR; ++i) x[i] = static_cast<const E*>(t.rows[i]) + offset;
  else
    POCKET_UNROLL for (int i = 0; i < MR; ++i)
      x[i] = static_cast<const E*>(t.row0) + (i < t.rows_n ? i : t.rows_n - 1) * t.row_step + offset;
}
template <typename E, int MR, class Tile>
__attribute__((always_inline)) inline void next_tile_positions(Tile& t) {
  if (t.rows != nullptr)
    t.rows += MR;
  else
    t.row0 = static_cast<const E*>(t.row0) + MR * t.row_step;
}

// Tiles of positions the convolution drivers hand one tile call at most (ConvF32Tile::tiles,
// ConvQ8Tile::tiles).
constexpr int64_t kConvRunTiles = 8;
struct ConvF32TileFn {
  void (*fn)(const ConvF32Tile& t);
  int mr, nr;
};
// Depthwise: one output row, every column and channel, channels across vector lanes.
struct DwConvF32Row {
  const float* x = nullptr;  // the batch item (in_h, in_w, c)
  const float* w = nullptr;  // (k_h, k_w, c)
  const float* bias = nullptr;  // (c): zeros without bias
  const float* res = nullptr;   // (out_w, c) of this row, or null
  float* y = nullptr;           // (out_w, c)
  int8_t* y_q8 = nullptr;       // instead of y (no res, bias zeros: the sums):
  const float* q_mult = nullptr;  //   conv_q8_requantize_sum(sum, q_mult, q_bias, lo, hi, q_zp)
  const float* q_bias = nullptr;  //   per channel (c, padded to a whole vector)
  int32_t q_zp = 0;
  int64_t c = 0, in_h = 0, in_w = 0, out_w = 0, oy = 0;
  int64_t k[2] = {1, 1}, stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  float lo = -INFINITY, hi = INFINITY;
};
// [*lo, *hi): the taps t < k with 0 <= base + t·dil < n.
inline void conv_f32_tap_range(int64_t base, int64_t dil, int64_t k, int64_t n, int64_t* lo, int64_t* hi) {
  *lo = base >= 0 ? 0 : (-base + dil - 1) / dil;
  *hi = base >= n ? 0 : (n - 1 - base) / dil + 1;
  if (*hi > k) *hi = k;
  if (*lo > *hi) *lo = *hi;
}
// y[j] = clamp(v + res[j], lo, hi) (no residual: res null), NaN kept.
inline void conv_f32_store(float v, const float* res, int j, float lo, float hi, float* y) {
  if (res != nullptr) v += res[j];
  v = v < lo ? lo : v;
  y[j] = v > hi ? hi : v;
}
// pocket::max_pool2d_channels_last: one output row, every column and channel, channels across
// vector lanes; ATen's rule per window (the largest value, the first of equal ones; a NaN
// wins; the padding never does).
struct MaxPoolF32Row {
  const float* x = nullptr;  // the batch item (in_h, in_w, c)
  float* y = nullptr;        // (out_w, c)
  int64_t c = 0, in_h = 0, in_w = 0, out_w = 0, oy = 0;
  int64_t k[2] = {1, 1}, stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
};
// Winograd F(2x2, 3x3) (pocket::conv2d_winograd), every channel of one tile of 2x2 outputs:
// the input transform V = B^T d B of its 4x4 input pixels d (null: the padding) into 16
// terms of c floats, term_stride apart; the output transform y = A^T m A + bias (+ res),
// clamped, of its 16 product terms m into the 2x2 pixels y (null: past the output).
struct WinoF32In {
  const float* d[16] = {};
  float* v = nullptr;
  int64_t term_stride = 0, c = 0;
};
struct WinoF32Out {
  const float* m = nullptr;
  int64_t term_stride = 0, c = 0;
  const float* bias = nullptr;  // (c), or null: none
  float* y[4] = {};
  const float* res[4] = {};     // null: no residual
  float lo = -INFINITY, hi = INFINITY;
};
struct ConvF32Kernels {
  // The tiles of 1, 2 and 3 blocks of 16 channels (same mr; AVX2 and NEON: the 1-block tile in
  // every slot). conv2d_packed's columns go as many blocks at a time as tiles[2] takes, so a
  // 48-channel layer is one column group on AVX-512.
  ConvF32TileFn tiles[3];
  void (*dw_row)(const DwConvF32Row& r);
  void (*max_pool_row)(const MaxPoolF32Row& r);
  void (*wino_in)(const WinoF32In& t);
  void (*wino_out)(const WinoF32Out& t);
  // Winograd's products when a chunk has few tiles (the narrow tile's rows would be mostly
  // repeats): a tile of fewer rows and more channels where the registers allow, else narrow.
  ConvF32TileFn few;
  // tiles with fewer rows (AVX-512: 7; else the same tiles), for position counts a multiple of
  // mr would overshoot: a 7x7 plane is 7 tiles of 7, not 6 of 8 and a last of 1 that computes 8.
  ConvF32TileFn alt[3];
};
// Kernel rows a row function (dw_row, max_pool_row) holds in its stack array; drivers send
// taller windows to the portable kernels.
constexpr int64_t kRowFnMaxRows = 16;
// The window geometry a row function reads (DwConvF32Row, MaxPoolF32Row) from its op's
// arguments (ConvPackedArgs, MaxPoolChannelsLastArgs, ConvQ8Args); c channels.
template <class Args, class Row>
void set_window(const Args& a, int64_t c, Row* r) {
  r->c = c;
  r->in_h = a.in[0];
  r->in_w = a.in[1];
  r->out_w = a.out[1];
  for (int d = 0; d < 2; ++d) {
    r->k[d] = a.k[d];
    r->stride[d] = a.stride[d];
    r->pad[d] = a.pad[d];
    r->dil[d] = a.dil[d];
  }
}

// ---- pocket::sdpa (sdpa_f32_<isa>.cpp)

// n <= kSdpaGroup query rows (q_stride floats apart) over the same len cached positions: row
// r's o (d floats, at o + r · o_stride) = softmax(scale · K q_r) · V, with K, V (len, d) rows d
// floats apart: the query heads of one kv head (grouped-query attention), which then read K
// and V once. `scores` holds n · len floats. fetch_v: the heads' first rows (V likely not in
// cache yet; the function may prefetch it while it reads K).
constexpr int kSdpaGroup = 4;
using SdpaRowsFn = void (*)(const float* q, int64_t q_stride, int n, const float* k, const float* v, int64_t len,
                            int64_t d, float scale, float* scores, float* o, int64_t o_stride, bool fetch_v);
// The same over float16 K and V (an fp16 KV cache), widened as they are loaded (exact).
using SdpaRowsHalfFn = void (*)(const float* q, int64_t q_stride, int n, const uint16_t* k, const uint16_t* v,
                                int64_t len, int64_t d, float scale, float* scores, float* o, int64_t o_stride,
                                bool fetch_v);

// ---- pocket::rms_norm, rope, swiglu (llm_f32_<isa>.cpp): the row/range functions of
// kernels/portable/llm_util.h, same contracts as rms_norm_rows, rope_rows, swiglu_range.
struct LlmKernels {
  RmsNormRowsFn rms_norm;
  RopeRowsFn rope;
  SwigluRangeFn swiglu;
};

// ---- aten::native_layer_norm, _softmax (last dim) and gelu on contiguous float32
// (nn_f32_<isa>.cpp); the drivers (nn.cpp) take the other cases to the portable kernels.
//   layer_norm: rows [r0, r1) of (rows, cols): y = (x - mean) * rstd * w + b (w, b: null or
//               cols floats), mean and rstd (rows); mean and variance summed in double.
//   softmax:    rows [r0, r1) of (rows, cols), along the row; a row holding a NaN or an
//               infinity takes the portable kernel's scalar arithmetic (NaN rows).
//   gelu:       elements [i0, i1): x * Phi(x), Phi from erfc (relative error ~1e-7 in both
//               tails), or with approximate="tanh" x * sigmoid(2 * sqrt(2/pi) * (x + 0.044715 x^3)).
//   hardswish, hardsigmoid: elements [i0, i1), exactly as the portable kernel.
//   sigmoid, silu: elements [i0, i1), sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for
//               x < 0, e = exp(-|x|) (under 2 ulp; 0 below -87), so no exponential overflows;
//               silu = x · sigmoid(x). A few ulp from the portable kernel; a NaN stays a NaN.
struct LayerNormRows {
  const float* x = nullptr;
  const float* w = nullptr;
  const float* b = nullptr;
  float* y = nullptr;
  float* mean = nullptr;
  float* rstd = nullptr;
  int64_t cols = 0;
  double eps = 0;
};
// One softmax row with the portable kernel's arithmetic (NaN or infinite inputs).
void softmax_row_exact(const float* x, float* y, int64_t n);
struct NnKernels {
  void (*layer_norm)(const LayerNormRows& a, int64_t r0, int64_t r1);
  void (*softmax)(const float* x, float* y, int64_t cols, int64_t r0, int64_t r1);
  void (*gelu)(const float* x, float* y, int64_t i0, int64_t i1, bool tanh);
  // aten::permute's NCHW -> NHWC of a 3-channel image (a network's RGB input), 4-byte
  // elements moved as bits: dst[p * 3 + ch] = src[ch * plane + p] for pixels p in [p0, p1).
  void (*interleave3)(const uint32_t* src, uint32_t* dst, int64_t plane, int64_t p0, int64_t p1);
  // Its channel transposes' whole 8x8 blocks (NCHW -> NHWC, and back: a channels-last chain's
  // output): d[c * d_stride + r] = s[r * s_stride + c] for r, c < 8.
  void (*transpose8)(const uint32_t* s, int64_t s_stride, uint32_t* d, int64_t d_stride);
  // Elements [i0, i1) of hardswish (swish: x * relu6(x + 3) / 6) or hardsigmoid (relu6(x + 3)
  // / 6): the portable kernel's operations in its order, so its bits; a NaN stays a NaN.
  void (*hard)(const float* x, float* y, int64_t i0, int64_t i1, bool swish);
  // Elements [i0, i1) of silu (x · sigmoid(x)) or sigmoid.
  void (*logistic)(const float* x, float* y, int64_t i0, int64_t i1, bool silu);
  // The .act overloads of conv2d_packed: act (hard or logistic above) in place over `rows` rows
  // of `cols` floats, `ldy` apart (a tile's output).
  void (*activate_rows)(ConvActivation act, float* y, int64_t ldy, int64_t rows, int64_t cols);
  // pocket::lookup_int8 over elements [i0, i1): y[i] = t[x[i] + 128] (t: 256 values).
  Lookup8Fn lookup8;
};

// ---- the microkernels of each ISA (defined in the ISA files; x86-64 or arm64 only)
#if defined(__x86_64__)
extern const GemmKernels kGemmAvx2;
extern const GemmKernels kGemmAvx512;
extern const DwConv3x3Fn kDwConv3x3Avx2;
extern const LinearQF32Kernels kLinearQF32Avx2;
extern const LinearQF32Kernels kLinearQF32Avx512;
extern const LinearQI8Kernels kLinearQI8Avx2;
extern const LinearQI8Kernels kLinearQI8Avx512Vnni;
extern const LinearQPKernels kLinearQPI8Avx2;
// LinearQPKernels::quantize_row in AVX2, for kLinearQPI8Avx2 and kLinearQPI8AvxVnni.
void linear_qp_quantize_row_avx2(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                 int32_t* xs);
extern const LinearQPKernels kLinearQPI8Avx512Vnni;
// AVX-VNNI under a function target attribute: GCC 11+, clang 12+ (Apple clang 13+); older
// compilers build no avxvnni set (those CPUs then run the avx2 one).
#if (defined(__clang__) && ((defined(__apple_build_version__) && __clang_major__ >= 13) || \
                            (!defined(__apple_build_version__) && __clang_major__ >= 12))) || \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11)
#define POCKET_HAVE_AVXVNNI 1
#else
#define POCKET_HAVE_AVXVNNI 0
#endif
#if POCKET_HAVE_AVXVNNI
extern const LinearQI8Kernels kLinearQI8AvxVnni;
extern const LinearQPKernels kLinearQPI8AvxVnni;
extern const ConvQ8Kernels kConvQ8I8AvxVnni;
#endif
extern const ConvQ8Kernels kConvQ8I16Avx2;
extern const ConvQ8Kernels kConvQ8I8Avx512Vnni;
extern const ConvF32Kernels kConvF32Avx2;
extern const ConvF32Kernels kConvF32Avx512;
extern const SdpaRowsFn kSdpaAvx2;
extern const SdpaRowsHalfFn kSdpaHalfAvx2;
extern const LlmKernels kLlmF32Avx2;
extern const NnKernels kNnF32Avx2;
#endif
#if defined(__aarch64__)
// SMMLA under a function target attribute: GCC 10+, clang 16+ (Apple clang 15+), whose
// arm_neon.h gates the I8MM intrinsics by target attributes rather than by global flags.
#if (defined(__clang__) && ((defined(__apple_build_version__) && __clang_major__ >= 15) || \
                            (!defined(__apple_build_version__) && __clang_major__ >= 16))) || \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10)
#define POCKET_HAVE_I8MM 1
#else
#define POCKET_HAVE_I8MM 0
#endif
extern const GemmKernels kGemmNeon;
extern const DwConv3x3Fn kDwConv3x3Neon;
extern const LinearQF32Kernels kLinearQF32Neon;
extern const LinearQI8Kernels kLinearQI8Neon;
extern const LinearQI8Kernels kLinearQI8NeonDot;
#if POCKET_HAVE_I8MM
extern const LinearQI8Kernels kLinearQI8NeonI8mm;  // kLinearQI8NeonDot with the I8MM linear_qp tiles
#endif
extern const LinearQPKernels kLinearQPI8Neon;
// LinearQPKernels::quantize_row in baseline NEON, for every arm64 linear_qp table.
void linear_qp_quantize_row_neon(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                 int32_t* xs);
extern const LinearQPKernels kLinearQPI8NeonDot;
#if POCKET_HAVE_I8MM
extern const LinearQPKernels kLinearQPI8NeonI8mm;
#endif
extern const ConvQ8Kernels kConvQ8I16Neon;
extern const ConvQ8Kernels kConvQ8I8NeonDot;
extern const ConvF32Kernels kConvF32Neon;
extern const SdpaRowsFn kSdpaNeon;
extern const SdpaRowsHalfFn kSdpaHalfNeon;
extern const LlmKernels kLlmF32Neon;
extern const NnKernels kNnF32Neon;
#endif

// ---- drivers (ISA-independent)
Error linear_with(KernelContext& ctx, Value** args, const GemmKernels& g);
// The product of aten::mm, bmm and addmm (portable when neither operand has a contiguous
// dimension the microkernels can stream).
void matmul_with(KernelContext& ctx, const Matmul& p, const GemmKernels& g);
Error conv_with(KernelContext& ctx, Value** args, const GemmKernels& g, DwConv3x3Fn dw);
Error linear_q_packed_with(KernelContext& ctx, Value** args, const LinearQI8Kernels& i8);
Error linear_q_with(KernelContext& ctx, Value** args, const GemmKernels& g, const LinearQF32Kernels& f32,
                    const LinearQI8Kernels& i8);
Error sdpa_with(KernelContext& ctx, Value** args, SdpaRowsFn rows, SdpaRowsHalfFn rows_half);
Error conv2d_q8_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, DwConv3x3Fn dw);
Error conv2d_q8_packed_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, DwConv3x3Fn dw);
Error conv2d_q8_channels_last_with(KernelContext& ctx, Value** args, const ConvQ8Kernels& k, const ConvF32Kernels& f);
// act: null for conv2d_packed / conv2d_winograd; for their .act overloads, the kernels of the
// activation, applied to each block of output the tiles have just stored (still in cache).
Error conv2d_packed_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k, const NnKernels* act);
Error conv2d_winograd_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k, const NnKernels* act);
Error max_pool2d_channels_last_with(KernelContext& ctx, Value** args, const ConvF32Kernels& k);
Error rms_norm_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k);
Error rope_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k);
Error swiglu_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k);
Error layer_norm_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k);
Error softmax_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k);
Error gelu_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k);
Error hard_activation_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k, bool swish);
Error logistic_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k, bool silu);
Error permute_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k);
Error lookup_int8_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k);

// Parallel fp32 products over the thread pool, cut into blocks that suit g's tiles.
void gemm_nt(KernelContext& ctx, const GemmKernels& g, int64_t m, int64_t n, int64_t k, const float* a,
             int64_t lda, const float* b, int64_t ldb, const float* bias, float* c, int64_t ldc);
void gemm_nn(KernelContext& ctx, const GemmKernels& g, int64_t m, int64_t n, int64_t k, const float* a,
             int64_t a_rs, int64_t a_cs, const float* b, int64_t ldb, const float* bias, float* c, int64_t ldc);

}  // namespace detail
}  // namespace pocket
