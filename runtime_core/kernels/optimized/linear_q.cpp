// Driver of pocket::linear_q over an ISA's microkernels (formats: schema/QUANTIZATION.md).
//
// act_mode 0 (fp32 activations), group_size % 16 == 0:
//   m <= kGemvRows: the weight is dequantized in registers, group by group (gemv), or on
//                   AVX2 and NEON for m <= 2 each group's scale is factored out of its sum;
//   larger m:       blocks of weight rows are dequantized (exactly, as the reference) into
//                   per-thread scratch and multiplied by all rows of x with the fp32 GEMM.
// act_mode 1, 2 (int8 activations), group_size % 32 == 0: x is quantized once (bit-exact
//   with the portable kernel), packed to int8 and its per-group sums taken; the microkernel
//   takes exact integer dot products and applies the scales in double.
// Other group sizes run the portable kernel. Work is split over weight rows.
//
// pocket::linear_q_packed (act_mode 1, 2; weights in blocks of 16 channels): x is quantized
// once, its sums per span taken (a group in act_mode 1, up to 8192 columns of 4-bit or 1024
// of 8-bit weights, else the portable kernel; 32 columns in act_mode 2), and the blocks are
// split over the threads.
#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

constexpr const char* kOp = "linear_q";
constexpr int64_t kGemvRows = 4;
constexpr int64_t kBlock = 32;

Error run_f32(KernelContext& ctx, const LinearQProblem& p, const GemmKernels& g, const LinearQF32Kernels& f) {
  if (p.m <= kGemvRows) {
    const float* x = p.x;
    if (p.w.bits == 4) {
      float* xp = nullptr;
      Error e = temp_array(ctx, kOp, "permuted activations", p.m * p.k, &xp);
      if (e != Error::Ok) return e;
      for (int64_t r = 0; r < p.m; ++r) f.permute_x(p.x + r * p.k, p.k, xp + r * p.k);
      x = xp;
    }
    ctx.parallel_for(p.n, grain_for((p.m + 1) * p.k), [&](int64_t c0, int64_t c1) {
      f.gemv(x, p.m, p.w, c0, c1, p.bias, p.y, p.n);
    });
    return Error::Ok;
  }
  // Blocks of weight rows small enough to stay in L2 while all rows of x pass over them.
  int64_t rows = (128 * 1024) / (4 * p.k);
  rows = rows < 8 ? 8 : rows > 256 ? 256 : rows / 8 * 8;
  const int64_t blocks = (p.n + rows - 1) / rows;
  const int64_t slices = slice_count(ctx, blocks, rows * p.m * p.k);
  float* scratch = nullptr;  // per slice (rows, k)
  Error e = temp_array(ctx, kOp, "dequantized weight rows", slices * rows * p.k, &scratch);
  if (e != Error::Ok) return e;
  parallel_slices(ctx, blocks, slices, [&](int64_t s, int64_t b0, int64_t b1) {
    float* wrows = scratch + s * rows * p.k;
    for (int64_t c0 = b0 * rows; c0 < p.n && c0 < b1 * rows; c0 += rows) {
      const int64_t c1 = c0 + rows < p.n ? c0 + rows : p.n;
      f.dequantize(p.w, c0, c1, wrows);
      g.nt(p.m, c1 - c0, p.k, p.x, p.k, wrows, p.k, p.bias != nullptr ? p.bias + c0 : nullptr, p.y + c0, p.n);
    }
  });
  return Error::Ok;
}

// Quantizes the rows of x as the portable kernel does (int16 values, scales per
// `scale_cols` columns) and calls pack(r0, r1) on each range of rows, in parallel: rows are
// independent, so a prefill's rows split over the threads (the same bits either way) while
// one row (decode) stays on the calling thread.
template <class Pack>
void quantize_rows(KernelContext& ctx, const LinearQProblem& p, int64_t scale_cols, int16_t* x16, float* sx,
                   Pack&& pack) {
  const int64_t row_scales = p.k / scale_cols;
  ctx.parallel_for(p.m, grain_for(8 * p.k), [&](int64_t r0, int64_t r1) {
    quantize_activations(p.x + r0 * p.k, r1 - r0, p.k, scale_cols, x16 + r0 * p.k, sx + r0 * row_scales);
    pack(r0, r1);
  });
}

// Quantizes x (quantize_rows), then packs it to int8 (4-bit weights: each block of 32 as
// [even columns, odd columns]) and takes the per-group sums the microkernels' corrections need.
Error quantize_x(KernelContext& ctx, const LinearQProblem& p, LinearQI8Problem* q) {
  const int64_t scale_cols = p.act_mode == 1 ? p.k : kBlock, blocks = p.k / kBlock;
  const int64_t groups = p.w.groups, g = p.w.group_size;
  int16_t* x16 = nullptr;
  int8_t* xq = nullptr;
  float* sx = nullptr;
  double *sxt = nullptr, *xst = nullptr;
  Error e = temp_array(ctx, kOp, "int8 activations", p.m * p.k, &x16);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "packed int8 activations", p.m * p.k, &xq);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "activation scales", p.m * (p.k / scale_cols), &sx);
  if (e == Error::Ok && p.act_mode == 2) e = temp_array(ctx, kOp, "transposed activation scales", p.m * blocks, &sxt);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "activation sums", p.m * groups, &xst);
  if (e != Error::Ok) return e;
  quantize_rows(ctx, p, scale_cols, x16, sx, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int16_t* src = x16 + r * p.k;
      int8_t* dst = xq + r * p.k;
      for (int64_t c = 0; c < p.k; c += kBlock)
        for (int64_t i = 0; i < kBlock; ++i)
          dst[c + i] = static_cast<int8_t>(p.w.bits == 4 ? src[c + (i < 16 ? 2 * i : 2 * (i - 16) + 1)] : src[c + i]);
      if (sxt != nullptr)
        for (int64_t b = 0; b < blocks; ++b) sxt[b * p.m + r] = sx[r * blocks + b];
      for (int64_t j = 0; j < groups; ++j) {
        double sum = 0;
        for (int64_t b = j * g; b < (j + 1) * g; b += kBlock) {
          const int32_t block_sum = sum_int16(src + b, kBlock);
          sum += p.act_mode == 1 ? static_cast<double>(block_sum)
                                 : static_cast<double>(block_sum) * sx[r * blocks + b / kBlock];
        }
        xst[j * p.m + r] = sum;
      }
    }
  });
  q->xq = xq;
  q->sx = sx;
  q->sxt = sxt;
  q->xst = xst;
  return Error::Ok;
}

Error run_i8(KernelContext& ctx, const LinearQProblem& p, const LinearQI8Kernels& k) {
  LinearQI8Problem q;
  Error e = quantize_x(ctx, p, &q);
  if (e != Error::Ok) return e;
  q.w = p.w;
  q.bias = p.bias;
  q.y = p.y;
  q.m = p.m;
  q.k = p.k;
  q.n = p.n;
  q.act_mode = static_cast<int>(p.act_mode);
  ctx.parallel_for((p.n + 3) / 4, grain_for(4 * p.m * p.k), [&](int64_t t0, int64_t t1) {
    k.run(q, t0 * 4, t1 * 4 < p.n ? t1 * 4 : p.n);
  });
  return Error::Ok;
}

// The longest span of columns whose int32 sums a linear_qp tile converts to float32 exactly.
constexpr int64_t max_span(int bits) { return bits == 4 ? 8192 : 1024; }

Error run_packed(KernelContext& ctx, const LinearQProblem& p, const LinearQPKernels& k) {
  LinearQPProblem q;
  q.span = p.act_mode == 1 ? p.w.group_size : kBlock;
  q.spans = p.k / q.span;
  const int64_t scale_cols = p.act_mode == 1 ? p.k : kBlock, row_scales = p.k / scale_cols;
  int16_t* x16 = nullptr;
  int8_t* xq = nullptr;
  float* sx = nullptr;
  int32_t* xs = nullptr;
  Error e = k.quantize_row != nullptr ? Error::Ok : temp_array(ctx, kOp, "int8 activations", p.m * p.k, &x16);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "packed int8 activations", p.m * p.k, &xq);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "activation scales", p.m * row_scales, &sx);
  if (e == Error::Ok) e = temp_array(ctx, kOp, "activation sums", p.m * q.spans, &xs);
  if (e != Error::Ok) return e;
  if (k.quantize_row != nullptr) {  // the same values in one pass, in the ISA's vectors
    ctx.parallel_for(p.m, grain_for(8 * p.k), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        k.quantize_row(p.x + r * p.k, p.k, scale_cols, q.span, xq + r * p.k, sx + r * row_scales, xs + r * q.spans);
    });
  } else {
    quantize_rows(ctx, p, scale_cols, x16, sx, [&](int64_t r0, int64_t r1) {
      for (int64_t i = r0 * p.k; i < r1 * p.k; ++i) xq[i] = static_cast<int8_t>(x16[i]);
      for (int64_t i = r0 * q.spans; i < r1 * q.spans; ++i) xs[i] = sum_int16(x16 + i * q.span, q.span);
    });
  }
  q.w = p.w;
  q.xq = xq;
  q.xs = xs;
  q.sx = sx;
  q.bias = p.bias;
  q.y = p.y;
  q.m = p.m;
  q.k = p.k;
  q.n = p.n;
  q.act_mode = static_cast<int>(p.act_mode);
  ctx.parallel_for(p.n / kPackedLanes, grain_for(kPackedLanes * p.m * p.k),
                   [&](int64_t b0, int64_t b1) { k.run(q, b0, b1); });
  return Error::Ok;
}

}  // namespace

Error linear_q_packed_with(KernelContext& ctx, Value** args, const LinearQI8Kernels& i8) {
  LinearQProblem p;
  Error e = prepare_linear_q(ctx, args, &p, /*packed=*/true);
  if (e != Error::Ok) return e;
  if (p.m == 0 || p.n == 0) return Error::Ok;
  if (i8.packed != nullptr && (p.act_mode == 2 || p.w.group_size <= max_span(p.w.bits)))
    return run_packed(ctx, p, *i8.packed);
  return linear_q_portable(ctx, p);
}

Error linear_q_with(KernelContext& ctx, Value** args, const GemmKernels& g, const LinearQF32Kernels& f32,
                    const LinearQI8Kernels& i8) {
  LinearQProblem p;
  Error e = prepare_linear_q(ctx, args, &p);
  if (e != Error::Ok) return e;
  if (p.m == 0 || p.n == 0) return Error::Ok;
  const int64_t g_size = p.w.group_size;
  if (p.act_mode == 0 && g_size % 16 == 0) return run_f32(ctx, p, g, f32);
  if (p.act_mode != 0 && g_size % kBlock == 0 && g_size <= kMaxDot) return run_i8(ctx, p, i8);
  return linear_q_portable(ctx, p);
}

}  // namespace detail
}  // namespace pocket
