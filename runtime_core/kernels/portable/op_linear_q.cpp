// pocket::linear_q(Tensor x, Tensor qweight, Tensor scales, Tensor? mins, Tensor? bias, int bits, int group_size, int act_mode) -> Tensor
// pocket::linear_q_packed(same arguments) -> Tensor: 4- or 8-bit weights in the int8 kernels'
//   layout (QuantWeight::packed), act_mode 1 or 2; here each weight row is unpacked as for linear_q.
//
// x (..., K) float32 · dequantize(qweight (N, K))ᵀ + bias -> (..., N) float32; formats in
// schema/QUANTIZATION.md, reference in exporter/quant/ops.py. Scales and mins are float32 or
// float16 (read in place; a row's are widened into scratch where the loop needs floats).
//   act_mode 0: fp32 activations. Each weight row is dequantized once, then dotted with
//               every row of x in float32.
//   act_mode 1: int8 activations, one scale per row of x. Each (x row, w row, group) adds
//               scale * Σ xq·q + min * Σ xq with exact integer sums; the sum over groups,
//               times the row's scale, is taken in double as the reference does.
//   act_mode 2: same with one activation scale per block of 32 columns (group_size % 32 == 0).
// Rows of x are quantized once per call; blocks of 8 weight rows are the outer loop, so each
// row is unpacked once for all M rows of x (prefill). Weight rows are split over the threads.
#include "parallel_util.h"
#include "parts.h"

namespace pocket {

namespace {

constexpr const char* kOp = "linear_q";
constexpr const char* kPackedOp = "linear_q_packed";
constexpr int64_t kBlock = 32;  // columns per activation scale in act_mode 2
// Weight rows unpacked together: each row of x is then read once per kRows weight rows,
// which keeps long prefills (many rows of x) from streaming x through the cache per row.
constexpr int64_t kRows = 8;

using Problem = detail::LinearQProblem;

// int8 activations: xq (m, k) (int8 values held as int16), one scale per `scale_cols`
// columns, and, for asymmetric weights, the sum of xq per `sum_cols` columns (a group in
// act_mode 1, a block in act_mode 2).
struct QuantizedX {
  int16_t* xq = nullptr;
  float* scales = nullptr;
  int32_t* sums = nullptr;
  int64_t scale_cols = 0, sum_cols = 0;
};

inline float add_bias(float v, const float* bias, int64_t c) { return bias != nullptr ? v + bias[c] : v; }

// Work of one weight row: m dot products of k.
int64_t row_work(const Problem& p) { return (p.m + 1) * p.k; }

Error linear_fp32(KernelContext& ctx, const Problem& p) {
  const int64_t blocks = (p.n + kRows - 1) / kRows;
  const int64_t slices = detail::slice_count(ctx, blocks, kRows * row_work(p));
  float* wrows = nullptr;  // per slice (kRows, k) dequantized
  int8_t* qrow = nullptr;  // per slice (k) scratch
  Error e = detail::temp_array(ctx, kOp, "dequantized weight rows", slices * kRows * p.k, &wrows);
  if (e == Error::Ok) e = detail::temp_array(ctx, kOp, "an unpacked weight row", slices * p.k, &qrow);
  if (e != Error::Ok) return e;
  detail::parallel_slices(ctx, blocks, slices, [&](int64_t s, int64_t b0, int64_t b1) {
    float* wr = wrows + s * kRows * p.k;
    int8_t* qr = qrow + s * p.k;
    for (int64_t c0 = b0 * kRows; c0 < p.n && c0 < b1 * kRows; c0 += kRows) {
      const int64_t rows = p.n - c0 < kRows ? p.n - c0 : kRows;
      for (int64_t i = 0; i < rows; ++i) detail::dequantize_row(p.w, c0 + i, qr, wr + i * p.k);
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t i = 0; i < rows; ++i)
          p.y[r * p.n + c0 + i] =
              add_bias(detail::dot_product(p.x + r * p.k, wr + i * p.k, p.k), p.bias, c0 + i);
    }
  });
  return Error::Ok;
}

// act_mode 1: y[r, c] (before the bias) from weight row q (k values).
// The scales and mins (null: symmetric) of one weight row.
struct RowScales {
  const float* s;
  const float* mins;
};

template <typename W>
float per_token(const Problem& p, const QuantizedX& a, int64_t r, RowScales rs, const W* q) {
  const int64_t g = p.w.group_size, groups = p.w.groups;
  const float *s = rs.s, *mins = rs.mins;
  const int16_t* xr = a.xq + r * p.k;
  double acc = 0;
  for (int64_t j = 0; j < groups; ++j) {
    double t = static_cast<double>(detail::dot_int8_long(xr + j * g, q + j * g, g)) * s[j];
    if (mins != nullptr) t += static_cast<double>(a.sums[r * groups + j]) * mins[j];
    acc += t;
  }
  return static_cast<float>(acc * a.scales[r]);
}

// act_mode 2: y[r, c] (before the bias) from weight row q (k values).
template <typename W>
float per_block(const Problem& p, const QuantizedX& a, int64_t r, RowScales rs, const W* q) {
  const int64_t blocks = p.k / kBlock, per_group = p.w.group_size / kBlock;
  const float *s = rs.s, *mins = rs.mins;
  const int16_t* xr = a.xq + r * p.k;
  const float* sx = a.scales + r * blocks;
  double acc = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t j = b / per_group;
    double t = static_cast<double>(detail::dot_int8(xr + b * kBlock, q + b * kBlock, kBlock)) * s[j];
    if (mins != nullptr) t += static_cast<double>(a.sums[r * blocks + b]) * mins[j];
    acc += t * sx[b];
  }
  return static_cast<float>(acc);
}

// y[:, c0 : c0 + rows] from weight rows q[0 .. rows) and their scales rs.
template <typename W>
void columns_int8(const Problem& p, const QuantizedX& a, int64_t c0, int64_t rows, const W* const* q,
                  const RowScales* rs) {
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t i = 0; i < rows; ++i) {
      float v = p.act_mode == 1 ? per_token(p, a, r, rs[i], q[i]) : per_block(p, a, r, rs[i], q[i]);
      p.y[r * p.n + c0 + i] = add_bias(v, p.bias, c0 + i);
    }
}

Error quantize_x(KernelContext& ctx, const Problem& p, QuantizedX* a) {
  a->scale_cols = p.act_mode == 1 ? p.k : kBlock;
  a->sum_cols = p.act_mode == 1 ? p.w.group_size : kBlock;
  Error e = detail::temp_array(ctx, kOp, "int8 activations", p.m * p.k, &a->xq);
  if (e == Error::Ok)
    e = detail::temp_array(ctx, kOp, "activation scales", p.m * (p.k / a->scale_cols), &a->scales);
  if (e == Error::Ok && !p.w.symmetric())
    e = detail::temp_array(ctx, kOp, "activation sums", p.m * (p.k / a->sum_cols), &a->sums);
  if (e != Error::Ok) return e;
  detail::quantize_activations(p.x, p.m, p.k, a->scale_cols, a->xq, a->scales);
  if (a->sums != nullptr)
    for (int64_t i = 0; i < p.m * (p.k / a->sum_cols); ++i)
      a->sums[i] = detail::sum_int16(a->xq + i * a->sum_cols, a->sum_cols);
  return Error::Ok;
}

Error linear_int8(KernelContext& ctx, const Problem& p) {
  QuantizedX a;
  Error e = quantize_x(ctx, p, &a);
  if (e != Error::Ok) return e;
  const int64_t blocks = (p.n + kRows - 1) / kRows;
  const int64_t slices = detail::slice_count(ctx, blocks, kRows * row_work(p));
  int8_t* unpacked = nullptr;  // per slice (kRows, k) 4-bit rows as int8, packed 8-bit rows' bytes
  if (p.w.bits == 4 || p.w.packed)
    e = detail::temp_array(ctx, kOp, "unpacked weight rows", slices * kRows * p.k, &unpacked);
  float* gathered = nullptr;  // per slice (kRows, 2, groups): a packed or float16 weight's row scales and mins
  if (e == Error::Ok && detail::row_scales_need_scratch(p.w))
    e = detail::temp_array(ctx, kOp, "row scales", slices * kRows * 2 * p.w.groups, &gathered);
  if (e != Error::Ok) return e;
  detail::parallel_slices(ctx, blocks, slices, [&](int64_t s, int64_t b0, int64_t b1) {
    int8_t* un = unpacked != nullptr ? unpacked + s * kRows * p.k : nullptr;
    float* gs = gathered != nullptr ? gathered + s * kRows * 2 * p.w.groups : nullptr;
    for (int64_t c0 = b0 * kRows; c0 < p.n && c0 < b1 * kRows; c0 += kRows) {
      const int64_t rows = p.n - c0 < kRows ? p.n - c0 : kRows;
      const int8_t* q8[kRows];
      const uint8_t* u8[kRows];
      RowScales rs[kRows];
      for (int64_t i = 0; i < rows; ++i) {
        if (p.w.bits == 4) {
          detail::unpack_row_4bit(p.w, c0 + i, un + i * p.k);
          q8[i] = un + i * p.k;
          u8[i] = nullptr;
        } else {
          u8[i] = detail::row_bytes_8bit(p.w, c0 + i, un != nullptr ? reinterpret_cast<uint8_t*>(un + i * p.k) : nullptr);
          q8[i] = reinterpret_cast<const int8_t*>(u8[i]);
        }
        float* scratch = gs != nullptr ? gs + i * 2 * p.w.groups : nullptr;
        rs[i].s = detail::row_scales(p.w, p.w.scales, c0 + i, scratch);
        rs[i].mins = p.w.symmetric() ? nullptr
                                     : detail::row_scales(p.w, p.w.mins, c0 + i,
                                                          scratch != nullptr ? scratch + p.w.groups : nullptr);
      }
      if (p.w.bits == 8 && !p.w.symmetric())
        columns_int8(p, a, c0, rows, u8, rs);
      else
        columns_int8(p, a, c0, rows, q8, rs);
    }
  });
  return Error::Ok;
}

// Checks every argument and fills p (except y); `packed`: linear_q_packed's layout.
Error parse(KernelContext& ctx, Value** args, Problem* p, bool packed) {
  const char* op = packed ? kPackedOp : kOp;
  const Tensor& x = args[0]->tensor;
  const Tensor* mins = args[3]->is_none() ? nullptr : &args[3]->tensor;
  const Tensor* bias = args[4]->is_none() ? nullptr : &args[4]->tensor;
  const Tensor& out = args[8]->tensor;
  Error e = detail::expect_dtype(ctx, op, "x", x, ScalarType::Float32);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "output", out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  if (x.dim < 1) return ctx.fail(Error::InvalidArgument, "%s: x is 0-d, expected at least 1 dim", op);
  p->act_mode = args[7]->i;
  if (p->act_mode < 0 || p->act_mode > 2)
    return ctx.fail(Error::InvalidArgument,
                    "%s: act_mode is %lld, expected 0 (fp32), 1 (int8 per token) or 2 (int8 per block of 32)",
                    op, static_cast<long long>(p->act_mode));
  p->k = x.sizes[x.dim - 1];
  p->m = p->k == 0 ? 0 : x.numel() / p->k;
  if (packed && p->act_mode == 0)
    return ctx.fail(Error::InvalidArgument,
                    "%s: act_mode is 0, expected 1 (int8 per token) or 2 (int8 per block of 32): the packed layout "
                    "is for int8 activations (use linear_q for fp32 ones)",
                    op);
  e = packed ? detail::read_packed_quant_weight(ctx, op, args[1]->tensor, args[2]->tensor, mins, args[5]->i,
                                                args[6]->i, p->k, &p->w)
             : detail::read_quant_weight(ctx, op, args[1]->tensor, args[2]->tensor, mins, args[5]->i, args[6]->i,
                                         p->k, &p->w);
  if (e != Error::Ok) return e;
  p->n = p->w.rows;
  if (p->act_mode == 2 && p->w.group_size % kBlock != 0)
    return ctx.fail(Error::InvalidArgument,
                    "%s: act_mode 2 (int8 per block of 32) needs a group_size that is a multiple of 32, got %lld",
                    op, static_cast<long long>(p->w.group_size));
  if (bias != nullptr) e = detail::expect_vector(ctx, op, "bias", *bias, p->n, ScalarType::Float32);
  if (e == Error::Ok) e = detail::contiguous_data(ctx, op, "x", x, &p->x);
  if (e == Error::Ok && bias != nullptr) e = detail::contiguous_data(ctx, op, "bias", *bias, &p->bias);
  return e;
}

}  // namespace

namespace detail {

Error prepare_linear_q(KernelContext& ctx, Value** args, LinearQProblem* p, bool packed) {
  Error e = parse(ctx, args, p, packed);
  if (e != Error::Ok) return e;
  const Tensor& x = args[0]->tensor;
  Tensor& out = args[8]->tensor;
  int64_t sizes[kMaxDim];
  for (int d = 0; d < x.dim; ++d) sizes[d] = x.sizes[d];
  sizes[x.dim - 1] = p->n;
  e = resize_output(ctx, packed ? kPackedOp : kOp, out, sizes, x.dim);
  if (e != Error::Ok) return e;
  p->y = out.data_as<float>();
  return Error::Ok;
}

Error linear_q_portable(KernelContext& ctx, const LinearQProblem& p) {
  return p.act_mode == 0 ? linear_fp32(ctx, p) : linear_int8(ctx, p);
}

}  // namespace detail

Error op_linear_q(KernelContext& ctx, Value** args) {
  detail::LinearQProblem p;
  Error e = detail::prepare_linear_q(ctx, args, &p);
  return e != Error::Ok ? e : detail::linear_q_portable(ctx, p);
}

Error op_linear_q_packed(KernelContext& ctx, Value** args) {
  detail::LinearQProblem p;
  Error e = detail::prepare_linear_q(ctx, args, &p, /*packed=*/true);
  return e != Error::Ok ? e : detail::linear_q_portable(ctx, p);
}

}  // namespace pocket
