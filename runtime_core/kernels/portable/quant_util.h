// Helpers for the quantized kernels (pocket::linear_q, embedding_q, conv2d_q8): checked views
// of a quantized weight, row unpacking and dequantization, int8 activation quantization and
// integer dot products. The packed layouts are documented in schema/QUANTIZATION.md; the
// reference semantics are exporter/quant/ops.py. Nothing here allocates.
#pragma once

#include <cstdint>

#include "convert.h"
#include "nn_util.h"

namespace pocket {
namespace detail {

// A quantized weight (rows, cols) with one scale (and, asymmetric, one min) per row and group
// of `group_size` consecutive columns:
//   4-bit: uint8 (rows, cols / 2), column 2j in the low nibble of byte j, 2j+1 in the high;
//          symmetric q = nibble - 8, asymmetric q = nibble
//   8-bit: int8 (rows, cols) symmetric, uint8 (rows, cols) asymmetric
//   w = q * scale (+ min)
// linear_q_packed's layout: blocks of kPackedLanes rows, per 64 bytes packed_step(bits)
// columns of each; group sizes are multiples of kPackedGroup.
constexpr int64_t kPackedLanes = 16, kPackedGroup = 8;
constexpr int64_t packed_step(int bits) { return bits == 4 ? 8 : 4; }

struct QuantWeight {
  const uint8_t* data = nullptr;  // (rows, row_bytes), contiguous; packed: (rows / 16, cols / 8, 64)
  // Scales and mins are float32, or float16 bits (uint16_t) when `half` (both the same dtype;
  // kernels read them where they lie, e.g. in the mapped file, and widen a few at a time).
  const void* scales = nullptr;  // (rows, groups); packed: (rows / 16, groups, 16)
  const void* mins = nullptr;    // as scales; null when symmetric
  int64_t rows = 0, cols = 0, group_size = 0, groups = 0, row_bytes = 0;
  int bits = 0;
  bool half = false;
  // linear_q_packed's layout (exporter/quant/ops.py pack_linear_weight), 16 rows across
  // lanes: byte [b, t, 4c + i] holds, of row 16b + c, 4-bit: columns 8t + i (low nibble) and
  // 8t + 4 + i (high); 8-bit: column 4t + i. row() does not apply.
  bool packed = false;

  bool symmetric() const { return mins == nullptr; }
  const uint8_t* row(int64_t r) const { return data + r * row_bytes; }
  // Element i of `values` (scales or mins) as float32 (exact; the portable conversion).
  float value(const void* values, int64_t i) const {
    return half ? half_to_float(static_cast<const uint16_t*>(values)[i]) : static_cast<const float*>(values)[i];
  }
};

// Checks bits (4 or 8), group_size (positive, even, dividing `cols`), the dtypes and shapes of
// qweight, scales and mins (null: symmetric; scales float32 or float16, mins the same dtype),
// and points `w` at their contiguous data (copied to temp memory when strided). `cols` < 0
// takes the column count from qweight's width. Messages start with `op`.
Error read_quant_weight(KernelContext& ctx, const char* op, const Tensor& qweight,
                        const Tensor& scales, const Tensor* mins, int64_t bits, int64_t group_size,
                        int64_t cols, QuantWeight* w);

// linear_q_packed's weight: checks the packed shapes ((rows / 16, cols / packed_step, 64),
// group_size % 8 == 0; dtypes as unpacked) and points `w` at the data as read_quant_weight
// does. `cols` < 0 takes the column count from qweight.
Error read_packed_quant_weight(KernelContext& ctx, const char* op, const Tensor& qweight,
                               const Tensor& scales, const Tensor* mins, int64_t bits, int64_t group_size,
                               int64_t cols, QuantWeight* w);

// Row r's scales (or mins: `values`) of w as float32: a pointer into w, or for a packed or
// float16 w gathered into `scratch` (w.groups floats).
const float* row_scales(const QuantWeight& w, const void* values, int64_t r, float* scratch);
// Whether row_scales needs its scratch for w.
inline bool row_scales_need_scratch(const QuantWeight& w) { return w.packed || w.half; }

// The stored bytes of row r of an 8-bit w: in place, or for a packed w gathered into
// `scratch` (w.cols bytes).
const uint8_t* row_bytes_8bit(const QuantWeight& w, int64_t r, uint8_t* scratch);

// Row r of a 4-bit w as integer values (symmetric [-8, 7], asymmetric [0, 15]). 8-bit rows
// need no unpacking: w.row(r) are the values (int8 symmetric, uint8 asymmetric).
void unpack_row_4bit(const QuantWeight& w, int64_t r, int8_t* out);

// Row r of w as floats: out[c] = q * scale (+ min), each operation rounded to float32 as
// torch's separate mul and add are (never fused into an FMA), so results are bit-exact.
// `scratch` holds w.cols bytes.
void dequantize_row(const QuantWeight& w, int64_t r, int8_t* scratch, float* out);

// Quantizes `rows` rows of x (rows, cols) to int8 values (stored as int16) in blocks of
// `block` columns (block divides cols), as exporter/quant/ops.py quantize_activations does
// in float32:
//   scale = amax|x_block| / 127, inv = scale > 0 ? 1 / scale : 0,
//   xq = clamp(round_half_even(x * inv), -127, 127)
// scales gets rows * (cols / block) values. A NaN in x quantizes to -127 (the reference
// would propagate it).
void quantize_activations(const float* x, int64_t rows, int64_t cols, int64_t block, int16_t* xq,
                          float* scales);

// Rounds v to the nearest integer, ties to even (torch.round), for |v| <= 2^22: adding and
// subtracting 1.5 * 2^23 leaves no fraction bits (in the default rounding mode; -ffast-math
// would fold it away). Unlike rint() it vectorizes without SSE4.1. Callers must not let the
// compiler fuse a preceding multiply into the add (see quant_util.cpp).
inline float round_half_even_small(float v) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  return (v + magic) - magic;
}

// Clamps v to [lo, hi]; NaN gives lo. Written with comparisons so it vectorizes.
inline float clamp_float(float v, float lo, float hi) { return v > lo ? (v < hi ? v : hi) : lo; }

// sum x[i] * q[i] over n <= kMaxDot terms: int8 activations (held as int16, |x| <= 127) times
// weight values (int8, or uint8 <= 255), exact in int32. Plain loops the compiler vectorizes
// (SSE2 pmaddwd, NEON smlal); int16 activations and int8 weights measured fastest of the
// int8/int16 combinations on SSE2.
constexpr int64_t kMaxDot = int64_t(1) << 16;  // 65536 * 127 * 255 < 2^31
template <typename W>
inline int32_t dot_int8(const int16_t* x, const W* q, int64_t n) {
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += int32_t(x[i]) * int32_t(q[i]);
  return sum;
}

// Same for any n, exact in int64.
template <typename W>
inline int64_t dot_int8_long(const int16_t* x, const W* q, int64_t n) {
  if (n <= kMaxDot) return dot_int8(x, q, n);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i += kMaxDot) sum += dot_int8(x + i, q + i, n - i < kMaxDot ? n - i : kMaxDot);
  return sum;
}

// sum a[i] over n values.
inline int32_t sum_int16(const int16_t* a, int64_t n) {
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += a[i];
  return sum;
}

// Dot product of two contiguous rows (float or double) with 8 partial sums, so the loop
// vectorizes without reassociation flags.
template <typename T>
inline T dot_product(const T* a, const T* b, int64_t n) {
  T part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += a[i + j] * b[i + j];
  T sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Temp memory for `count` items of T, or an OutOfMemory failure naming `op` and `what`.
template <typename T>
Error temp_array(KernelContext& ctx, const char* op, const char* what, int64_t count, T** out) {
  size_t bytes = static_cast<size_t>(count > 0 ? count : 1) * sizeof(T);
  *out = static_cast<T*>(ctx.allocate_temp(bytes));
  if (*out == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for %s (%zu bytes)", op, what, bytes);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
