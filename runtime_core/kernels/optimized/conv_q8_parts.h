// The parts of the conv2d_q8 driver (conv_q8.cpp) that its channels-last depthwise driver
// (conv_q8_dw.cpp) shares. Internal to those two files.
#pragma once

#include <initializer_list>

#include "ukernels.h"

namespace pocket {
namespace detail {

// Output channels of the widest tile; per-channel arrays hold a multiple of it per group.
constexpr int kMaxNr = 32;

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The arguments of conv_q8_quantize for x, and what the variant adds to the stored element.
struct InputQuant {
  float scale, lo, hi;
  int32_t offset;
};
inline InputQuant input_quant(const ConvQ8Args& s, const ConvQ8Kernels& k) {
  const int32_t offset = k.elem_bytes == 1 ? static_cast<int32_t>(s.zero_point) + k.byte_offset : 0;
  return {static_cast<float>(s.x_scale), static_cast<float>(-128 - s.zero_point),
          static_cast<float>(127 - s.zero_point), offset};
}

// The instruction's kept block for arrays derived from a convolution's constant weight,
// w_scales and bias (conv_q8.cpp).
void* kept_arrays(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, bool requantize_sums,
                  std::initializer_list<int64_t> layout, size_t bytes, bool* ready);
// Whether the vector kernels may requantize sums of k products without a clamp first
// (conv_q8.cpp): ConvQ8Tile / DwConvQ8Row::q_in_range.
bool requantized_in_range(const float* q_mult, const float* q_bias, int64_t n, int64_t k);

// conv_q8_dw.cpp: whether a channels-last convolution is depthwise with a window the
// depthwise drivers take, and those drivers (the i8 variants' dot products on an int8 x, else
// the fp32 row function).
bool is_depthwise_cl(const ConvQ8Args& s);
Error run_depthwise_cl(KernelContext& ctx, const ConvQ8Args& s, const ConvQ8Kernels& k, const ConvF32Kernels& f);

}  // namespace detail
}  // namespace pocket
