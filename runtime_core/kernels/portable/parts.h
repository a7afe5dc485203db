// Pieces of the portable kernels that the optimized kernels (kernels/optimized/) reuse: an
// op's argument checks and output sizing (prepare_*: same checks and messages as the
// portable kernel, output resized), and its portable computation, which is also the
// fallback for the cases an optimized kernel does not cover. The portable op_<name>
// functions are prepare_* followed by *_portable.
#pragma once

#include <cmath>
#include <cstdint>

#include "quant_util.h"

namespace pocket {
namespace detail {

// ---- aten::linear: y (m, n) = x (m, k) · w (n, k)ᵀ + b (n); float32 or float64, contiguous
// (strided inputs are copied to temp memory by prepare_linear).
struct LinearArgs {
  ScalarType dtype = ScalarType::Float32;
  const void* x = nullptr;
  const void* w = nullptr;
  const void* b = nullptr;  // null: no bias
  void* y = nullptr;
  int64_t m = 0, n = 0, k = 0;
};
Error prepare_linear(KernelContext& ctx, Value** args, LinearArgs* a);
void linear_portable(KernelContext& ctx, const LinearArgs& a);

// ---- aten::mm, bmm, addmm: c (batch, m, n) contiguous = a (batch, m, k) · b (batch, k, n),
// float32, every operand addressed through its own strides (transposed operands need no copy).
struct Matmul {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  const float* a = nullptr;
  int64_t a_bs = 0, a_rs = 0, a_cs = 0;  // batch, row and column strides (elements)
  const float* b = nullptr;
  int64_t b_bs = 0, b_rs = 0, b_cs = 0;
  float* c = nullptr;
};
using MatmulFn = void (*)(KernelContext& ctx, const Matmul& p);
void matmul_portable(KernelContext& ctx, const Matmul& p);
// The three ops with the product computed by `matmul`.
Error mm_with(KernelContext& ctx, Value** args, MatmulFn matmul);
Error bmm_with(KernelContext& ctx, Value** args, MatmulFn matmul);
Error addmm_with(KernelContext& ctx, Value** args, MatmulFn matmul);

// ---- aten::convolution, computed as 3d (a missing spatial dim has size 1).
struct ConvShape {
  int64_t batch = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t in[3] = {1, 1, 1};   // (depth, height, width) of the input
  int64_t out[3] = {1, 1, 1};  // of the output
  int64_t k[3] = {1, 1, 1};    // of the kernel
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1}, out_pad[3] = {0, 0, 0};
  bool transposed = false;
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t k_plane() const { return k[0] * k[1] * k[2]; }
};
// x (batch, c_in, in...), w (c_out, c_in / groups, k...) or, transposed,
// (c_in, c_out / groups, k...), b (c_out) or null -> y (batch, c_out, out...); contiguous.
struct ConvArgs {
  ConvShape s;
  ScalarType dtype = ScalarType::Float32;
  const void* x = nullptr;
  const void* w = nullptr;
  const void* b = nullptr;
  void* y = nullptr;
};
Error prepare_conv(KernelContext& ctx, Value** args, ConvArgs* a);
void conv_portable(KernelContext& ctx, const ConvArgs& a);
// pocket::convolution_clamp (x, w, b, stride, padding, dilation, groups, out_min, out_max):
// `conv` (an aten::convolution kernel) on the same arguments, not transposed, then torch.clamp
// of the output to the bounds (None: unbounded), threaded and vectorized.
Error convolution_clamp_with(KernelContext& ctx, Value** args, KernelFn conv);

// ---- pocket::lookup_int8: y = t[x + 128], int8 (t: the table's 256 values). The op's checks,
// then a strided x element by element and a contiguous one through `range` over [i0, i1) on
// the threads (the portable loop, or an ISA's: NnKernels::lookup8).
using Lookup8Fn = void (*)(const int8_t* x, int8_t* y, const int8_t* t, int64_t i0, int64_t i1);
void lookup8_portable(const int8_t* x, int8_t* y, const int8_t* t, int64_t i0, int64_t i1);
Error lookup_int8_with(KernelContext& ctx, Value** args, Lookup8Fn range);

// ---- pocket::conv2d_q8 and conv2d_q8_packed (exporter/quant/ops.py): y (batch, c_out, out_h,
// out_w) float32 from x (batch, c_in, in_h, in_w) float32 quantized per tensor and an int8
// weight quantized per output channel, contiguous: (c_out, c_in / groups, k_h, k_w), or (the
// packed op, 6-d) as (groups, blocks, taps, quads, kConvPackLanes, kConvPackQuad): element
// [g, b, t, q, j, u] is w[g * c_out / groups + 16 b + j, 4 q + u, t] (zero past the group's
// channels), t = kh * k_w + kw. The packed op clamps y to [out_min, out_max].
// pocket::conv2d_q8_channels_last is the packed op on x (batch, in_h, in_w, c_in) -> y (batch,
// out_h, out_w, c_out), with a residual shaped as y (or None) added after the bias. Its x may
// be int8, already quantized with x_scale and x_zero_point (x_q8), and its y int8 (y_q8, with
// out_scale and out_zero_point): without a residual requantized from the sums in float32,
//   y_q8 = clamp(round(float(acc) · q_mult[c] + q_bias[c]) + out_zero_point, q_lo, q_hi)
//   q_mult = float(x_scale · w_scale[c] / out_scale), q_bias = float(bias[c] / out_scale),
//   q_lo / q_hi = out_min / out_max quantized (round, + zp, clamped to -128..127; else -128 / 127)
// (as XNNPACK requantizes; at most one step from quantizing the float32 y), and with one the
// float32 y (residual added, clamped) quantized: conv_q8_requantize(y, out_scale, ...).
constexpr int kConvPackLanes = 16, kConvPackQuad = 4;
struct ConvQ8Args {
  int64_t batch = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t in[2] = {0, 0}, out[2] = {0, 0}, k[2] = {0, 0};  // (height, width)
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  double x_scale = 1;
  int64_t zero_point = 0;
  const float* x = nullptr;
  const int8_t* w = nullptr;
  bool packed = false;  // w's layout: 6-d packed, else (c_out, c_in / groups, k_h, k_w)
  const float* w_scales = nullptr;
  const float* bias = nullptr;  // null: no bias
  const float* res = nullptr;   // null: no residual (channels-last op)
  float out_min = -INFINITY, out_max = INFINITY;
  float* y = nullptr;
  const int8_t* x_q8 = nullptr;  // int8 x (then x is null): channels-last op only
  int8_t* y_q8 = nullptr;        // int8 y (then y is null): channels-last op only
  double out_scale = 1;          // y_q8 (see above)
  int32_t out_zero_point = 0;
  int32_t q_lo = -128, q_hi = 127;
  bool channels_last = false;    // x and y (and res) are NHWC
  const char* op = "conv2d_q8";  // for messages
  int64_t cin_g() const { return c_in / groups; }
  int64_t cout_g() const { return c_out / groups; }
  int64_t blocks() const { return (cout_g() + kConvPackLanes - 1) / kConvPackLanes; }  // packed
  int64_t quads() const { return (cin_g() + kConvPackQuad - 1) / kConvPackQuad; }      // packed
  int64_t in_plane() const { return in[0] * in[1]; }
  int64_t out_plane() const { return out[0] * out[1]; }
  int64_t k_plane() const { return k[0] * k[1]; }
};
Error prepare_conv2d_q8(KernelContext& ctx, Value** args, ConvQ8Args* a);
Error prepare_conv2d_q8_packed(KernelContext& ctx, Value** args, ConvQ8Args* a);
Error prepare_conv2d_q8_channels_last(KernelContext& ctx, Value** args, ConvQ8Args* a);
Error conv2d_q8_portable(KernelContext& ctx, const ConvQ8Args& a);

// x - zero_point for one input value of conv2d_q8, as an integer in [-255, 255]:
//   clamp(round(x / x_scale) + zp, -128, 127) - zp  (float32 ops, ties to even)
// with lo = -128 - zp and hi = 127 - zp (clamping before rounding is the same as after, the
// bounds being integers).
inline int32_t conv_q8_quantize(float x, float x_scale, float lo, float hi) {
  return static_cast<int32_t>(round_half_even_small(clamp_float(x / x_scale, lo, hi)));
}
// conv2d_q8_channels_last's int8 output from a float32 y (with a residual): clamp(round(y /
// scale) + zp, -128, 127), the stored value conv_q8_quantize gives the next convolution (lo =
// -128 - zp, hi = 127 - zp).
inline int8_t conv_q8_requantize(float y, float scale, float lo, float hi, int32_t zp) {
  return static_cast<int8_t>(conv_q8_quantize(y, scale, lo, hi) + zp);
}
// conv2d_q8_channels_last's int8 output from the sum acc (without a residual): mult and bias
// are q_mult[c] and q_bias[c], lo = q_lo - zp and hi = q_hi - zp (float32 ops, ties to even:
// the bounds are integers, so clamping before rounding is the same as after). The clamp is
// max then min as torch.clamp (hi wins over a higher lo) and as the vector max / min (a NaN
// gives lo).
inline int8_t conv_q8_requantize_sum(float acc, float mult, float bias, float lo, float hi, int32_t zp) {
  float v = acc * mult + bias;
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return static_cast<int8_t>(static_cast<int32_t>(round_half_even_small(v)) + zp);
}
// q_mult and q_bias of conv_q8_requantize_sum for a channel (one definition: the optimized
// kernels' ConvQ8Kernels::out_params computes them with the same functions, in vectors).
inline float conv_q8_out_mult_of(double x_scale, float w_scale, double out_scale) {
  return static_cast<float>(x_scale * static_cast<double>(w_scale) / out_scale);
}
inline float conv_q8_out_bias_of(float bias, double out_scale) {
  return static_cast<float>(static_cast<double>(bias) / out_scale);
}
inline float conv_q8_out_mult(const ConvQ8Args& s, int64_t c) {
  return conv_q8_out_mult_of(s.x_scale, s.w_scales[c], s.out_scale);
}
inline float conv_q8_out_bias(const ConvQ8Args& s, int64_t c) {
  return s.bias != nullptr ? conv_q8_out_bias_of(s.bias[c], s.out_scale) : 0.0f;
}
// torch.clamp(y, lo, hi) = min(max(y, lo), hi), NaN kept: the packed op's output clamp.
inline float conv_q8_clamp(float y, float lo, float hi) {
  y = y < lo ? lo : y;
  return y > hi ? hi : y;
}

// The logistic and piecewise-linear activations, as the portable ops compute them (op_sigmoid,
// op_silu, op_hard_activations: ATen divides by 6 last, and so do these).
template <typename T>
T sigmoid_of(T x) {
  return T(1) / (T(1) + std::exp(-x));
}
template <typename T>
T silu_of(T x) {
  return x / (T(1) + std::exp(-x));
}
template <typename T>
T relu6_shifted(T x) {  // relu6(x + 3)
  const T r = x + T(3);
  return r < T(0) ? T(0) : (r > T(6) ? T(6) : r);
}
template <typename T>
T hardsigmoid_of(T x) {
  return relu6_shifted(x) / T(6);
}
template <typename T>
T hardswish_of(T x) {
  return x * relu6_shifted(x) / T(6);
}

// The activation of pocket::conv2d_packed.act and conv2d_winograd.act, after the clamp.
enum class ConvActivation : uint8_t { None, Sigmoid, Silu, Hardsigmoid, Hardswish };
// How the vector kernels compute an activation other than None: logistic (sigmoid, silu) or
// hard (hardsigmoid, hardswish), and times x (silu, hardswish: their `flag`).
inline bool conv_activation_logistic(ConvActivation act) {
  return act == ConvActivation::Sigmoid || act == ConvActivation::Silu;
}
inline bool conv_activation_times_x(ConvActivation act) {
  return act == ConvActivation::Silu || act == ConvActivation::Hardswish;
}
inline float conv_activate(ConvActivation act, float y) {
  switch (act) {
    case ConvActivation::None: return y;
    case ConvActivation::Sigmoid: return sigmoid_of(y);
    case ConvActivation::Silu: return silu_of(y);
    case ConvActivation::Hardsigmoid: return hardsigmoid_of(y);
    case ConvActivation::Hardswish: return hardswish_of(y);
  }
  return y;
}

// ---- pocket::conv2d_packed (exporter/custom_ops.py): 2d convolution of channels-last
// float32 tensors, x (batch, in_h, in_w, c_in) -> y (batch, out_h, out_w, c_out) =
// clamp(conv(x, w) + bias + residual, out_min, out_max), residual (optional) shaped as y.
// pocket::conv2d_packed.act and conv2d_winograd.act take one more argument, the name of an
// activation applied after the clamp (sigmoid, silu, hardsigmoid or hardswish).
// The weight is stored in the layout the kernels read (exporter/custom_ops.py
// pack_conv_weight):
//   groups 1: (blocks, k_h, k_w, c_in, kConvPackLanes): [b, i, j, c, l] = w[16 b + l, c, i, j]
//             (zero past c_out): per block of 16 output channels a panel of rows of 16
//   depthwise (groups == c_in == c_out): (k_h, k_w, c): [i, j, c] = w[c, 0, i, j]
//   pocket::conv2d_winograd (k 3x3, stride, dilation and groups 1): (blocks, 4, 4, c_in, 16),
//             the 16 terms of U = G g G^T per channel pair (pack_winograd_weight) as groups 1
//             packs a 4x4 kernel
struct ConvPackedArgs {
  int64_t batch = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t in[2] = {0, 0}, out[2] = {0, 0}, k[2] = {0, 0};  // (height, width)
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  const float* x = nullptr;
  const float* w = nullptr;
  const float* bias = nullptr;  // null: no bias
  const float* res = nullptr;   // null: no residual
  float out_min = -INFINITY, out_max = INFINITY;
  float* y = nullptr;
  bool winograd = false;  // conv2d_winograd
  ConvActivation act = ConvActivation::None;
  bool depthwise() const { return groups > 1; }
  int64_t blocks() const { return (c_out + kConvPackLanes - 1) / kConvPackLanes; }
  int64_t taps() const { return k[0] * k[1]; }
  int64_t out_plane() const { return out[0] * out[1]; }
};
// winograd: pocket::conv2d_winograd's arguments (the same, k 3x3 and stride, dilation and
// groups 1 checked); activation: the .act overload's (the activation before the output).
Error prepare_conv2d_packed(KernelContext& ctx, Value** args, ConvPackedArgs* a, bool winograd = false,
                            bool activation = false);
void conv2d_packed_portable(KernelContext& ctx, const ConvPackedArgs& a);
void conv2d_winograd_portable(KernelContext& ctx, const ConvPackedArgs& a);

// ---- pocket::max_pool2d_channels_last: aten::max_pool2d (values only) of a channels-last
// float32 x (batch, in_h, in_w, c) -> y (batch, out_h, out_w, c). prepare_ reads and checks the
// window as ATen's pooling ops do and resizes y.
struct MaxPoolChannelsLastArgs {
  int64_t batch = 0, c = 0;
  int64_t in[2] = {0, 0}, out[2] = {0, 0}, k[2] = {1, 1};  // (height, width)
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  const float* x = nullptr;
  float* y = nullptr;
};
Error prepare_max_pool2d_channels_last(KernelContext& ctx, Value** args, MaxPoolChannelsLastArgs* a);
void max_pool2d_channels_last_portable(KernelContext& ctx, const MaxPoolChannelsLastArgs& a);

// ---- pocket::linear_q (formats in schema/QUANTIZATION.md): y (m, n) from x (m, k) float32.
struct LinearQProblem {
  QuantWeight w;                // (n, k)
  const float* x = nullptr;     // (m, k)
  const float* bias = nullptr;  // (n) or null
  float* y = nullptr;           // (m, n)
  int64_t m = 0, k = 0, n = 0;
  int64_t act_mode = 0;         // 0 fp32, 1 int8 per token, 2 int8 per block of 32
};
// `packed`: pocket::linear_q_packed's arguments (QuantWeight::packed, act_mode 1 or 2).
Error prepare_linear_q(KernelContext& ctx, Value** args, LinearQProblem* p, bool packed = false);
Error linear_q_portable(KernelContext& ctx, const LinearQProblem& p);

// ---- pocket::sdpa: causal attention over a KV cache, float32 (the caches may be float16:
// then k16/v16 are set and k/v are null), contiguous.
struct SdpaArgs {
  const float* q = nullptr;  // (B, Hq, T, D)
  const float* k = nullptr;  // (B, Hkv, S, D)
  const float* v = nullptr;  // (B, Hkv, S, D)
  const uint16_t* k16 = nullptr;  // float16 caches, (B, Hkv, S, D)
  const uint16_t* v16 = nullptr;
  float* out = nullptr;      // (B, Hq, T, D)
  int64_t B = 0, Hq = 0, T = 0, D = 0, Hkv = 0, S = 0, start = 0;
  float scale = 1.0f;
};
Error prepare_sdpa(KernelContext& ctx, Value** args, SdpaArgs* a);
Error sdpa_portable(KernelContext& ctx, const SdpaArgs& a);

}  // namespace detail
}  // namespace pocket
