// Driver of aten::native_layer_norm, _softmax, gelu, hardswish, hardsigmoid, sigmoid, silu and
// permute.
// Contiguous float32 tensors (softmax: along the last dim) go to an ISA's row functions
// (nn_f32_<isa>.cpp), split over the thread pool; permute goes to the portable kernel with the
// ISA's 3-channel interleave (the NCHW -> NHWC of the image a channels-last network starts
// from). Everything else, and every argument the fast path does not accept, goes to the
// portable kernel, which also produces the error messages. The fast path's checks are therefore
// only predicates: a call it takes is one the portable kernel accepts too.
#include <cmath>

#include "../portable/elementwise_util.h"
#include "../portable/parallel_util.h"
#include "../portable/shape_util.h"
#include "ukernels.h"

namespace pocket {

Error op_native_layer_norm(KernelContext& ctx, Value** args);
Error op_softmax(KernelContext& ctx, Value** args);
Error op_gelu(KernelContext& ctx, Value** args);
Error op_hardswish(KernelContext& ctx, Value** args);
Error op_hardsigmoid(KernelContext& ctx, Value** args);
Error op_sigmoid(KernelContext& ctx, Value** args);
Error op_silu(KernelContext& ctx, Value** args);

namespace detail {

namespace {

bool contiguous_f32(const Tensor& t) { return t.dtype == ScalarType::Float32 && t.is_contiguous(); }

// A weight or bias the fast layer_norm takes: None, or float32 of exactly the normalized
// shape (the last `m` sizes of `in`), contiguous.
bool affine_ok(const Value& v, const Tensor& in, int m) {
  if (v.is_none()) return true;
  const Tensor& t = v.tensor;
  if (!contiguous_f32(t) || t.dim != m) return false;
  for (int i = 0; i < m; ++i)
    if (t.sizes[i] != in.sizes[in.dim - m + i]) return false;
  return true;
}

}  // namespace

// args: input, normalized_shape, weight?, bias?, eps, out, mean, rstd
Error layer_norm_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k) {
  const Tensor& in = args[0]->tensor;
  const IntList& shape = args[1]->int_list;
  Tensor &out = args[5]->tensor, &mean = args[6]->tensor, &rstd = args[7]->tensor;
  const int m = static_cast<int>(shape.size);
  bool fast = contiguous_f32(in) && m >= 1 && m <= in.dim && out.dtype == ScalarType::Float32 &&
              mean.dtype == ScalarType::Float32 && rstd.dtype == ScalarType::Float32;
  for (int i = 0; fast && i < m; ++i) fast = in.sizes[in.dim - m + i] == shape[static_cast<size_t>(i)];
  fast = fast && affine_ok(*args[2], in, m) && affine_ok(*args[3], in, m);
  if (!fast) return op_native_layer_norm(ctx, args);
  int64_t stat_sizes[kMaxDim];
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < in.dim; ++d) {
    stat_sizes[d] = d < in.dim - m ? in.sizes[d] : 1;
    (d < in.dim - m ? rows : cols) *= in.sizes[d];
  }
  Error e = resize_output(ctx, "native_layer_norm", out, in.sizes, in.dim);
  if (e == Error::Ok) e = resize_output(ctx, "native_layer_norm", mean, stat_sizes, in.dim);
  if (e == Error::Ok) e = resize_output(ctx, "native_layer_norm", rstd, stat_sizes, in.dim);
  if (e != Error::Ok) return e;
  LayerNormRows a;
  a.x = in.data_as<const float>();
  a.w = args[2]->is_none() ? nullptr : args[2]->tensor.data_as<const float>();
  a.b = args[3]->is_none() ? nullptr : args[3]->tensor.data_as<const float>();
  a.y = out.data_as<float>();
  a.mean = mean.data_as<float>();
  a.rstd = rstd.data_as<float>();
  a.cols = cols;
  a.eps = args[4]->d;
  ctx.parallel_for(rows, grain_for(cols * 4), [&](int64_t r0, int64_t r1) { k.layer_norm(a, r0, r1); });
  return Error::Ok;
}

void softmax_row_exact(const float* x, float* y, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = (x[i] > m || std::isnan(x[i])) ? x[i] : m;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (y[i] = std::exp(x[i] - m));
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

// args: self, dim, half_to_float, out
Error softmax_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[3]->tensor;
  const int64_t dim = args[1]->i;
  const bool last = in.dim >= 1 && (dim == in.dim - 1 || dim == -1);
  if (args[2]->b || !last || !contiguous_f32(in) || out.dtype != ScalarType::Float32 || in.numel() == 0)
    return op_softmax(ctx, args);
  Error e = resize_output(ctx, "_softmax", out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  const int64_t cols = in.sizes[in.dim - 1], rows = in.numel() / cols;
  const float* x = in.data_as<const float>();
  float* y = out.data_as<float>();
  ctx.parallel_for(rows, grain_for(cols * 8), [&](int64_t r0, int64_t r1) { k.softmax(x, y, cols, r0, r1); });
  return Error::Ok;
}

// args: self, approximate, out
Error gelu_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[2]->tensor;
  const bool none = string_is(*args[1], "none"), tanh = string_is(*args[1], "tanh");
  if (!(none || tanh) || !contiguous_f32(in) || out.dtype != ScalarType::Float32) return op_gelu(ctx, args);
  Error e = resize_output(ctx, "gelu", out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  const float* x = in.data_as<const float>();
  float* y = out.data_as<float>();
  ctx.parallel_for(in.numel(), grain_for(24), [&](int64_t i0, int64_t i1) { k.gelu(x, y, i0, i1, tanh); });
  return Error::Ok;
}

// An elementwise activation (args: self, out) through `range` (one of the set's, `flag` its
// choice of op) on contiguous float32, else `portable`. `cost`: grain_for's work per element.
static Error unary_with_kernels(KernelContext& ctx, Value** args, const char* name, KernelFn portable,
                                void (*range)(const float*, float*, int64_t, int64_t, bool), bool flag, int64_t cost) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[1]->tensor;
  if (!contiguous_f32(in) || out.dtype != ScalarType::Float32) return portable(ctx, args);
  Error e = resize_output(ctx, name, out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  const float* x = in.data_as<const float>();
  float* y = out.data_as<float>();
  ctx.parallel_for(in.numel(), grain_for(cost), [&](int64_t i0, int64_t i1) { range(x, y, i0, i1, flag); });
  return Error::Ok;
}

// args: self, out (aten::hardswish when swish, else aten::hardsigmoid)
Error hard_activation_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k, bool swish) {
  return swish ? unary_with_kernels(ctx, args, "hardswish", op_hardswish, k.hard, true, 2)
               : unary_with_kernels(ctx, args, "hardsigmoid", op_hardsigmoid, k.hard, false, 2);
}

// args: self, out (aten::silu when silu, else aten::sigmoid)
Error logistic_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k, bool silu) {
  return silu ? unary_with_kernels(ctx, args, "silu", op_silu, k.logistic, true, 8)
              : unary_with_kernels(ctx, args, "sigmoid", op_sigmoid, k.logistic, false, 8);
}

// args: x, table, out: the portable kernel's checks and strided loop, k.lookup8 on contiguous x.
Error lookup_int8_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k) {
  return lookup_int8_with(ctx, args, k.lookup8);
}

// The portable kernel with the ISA's 3-channel interleave and 8x8 block: it checks the
// arguments, picks the channel transposes and splits them over the threads.
Error permute_with_kernels(KernelContext& ctx, Value** args, const NnKernels& k) {
  return permute_interleaving(ctx, args, k.interleave3, k.transpose8);
}

}  // namespace detail
}  // namespace pocket
