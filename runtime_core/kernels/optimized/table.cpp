// Which optimized kernel serves which op on which CPU. Each op-level kernel is a driver
// (gemm.cpp, conv.cpp, linear_q.cpp, sdpa.cpp) bound to the best microkernels of a set:
//
// (convolution_clamp: the conv kernel of the set, then a clamp; conv2d_packed and
// conv2d_winograd: conv f32 of the set's gemm column (avx2, avx512, neon), their .act
// overloads' activation from nn f32 (below); linear_q_packed:
// the linear_qp tile of the set's i8 column: avx2 in avx2/avx512, avxvnni, avx512vnni, neon, neondot; neoni8mm:
// neondot's, with SMMLA for tiles of several rows.)
// (native_layer_norm, _softmax, gelu, hardswish, hardsigmoid, sigmoid, silu, permute's 3-channel
// interleave: nn f32 avx2 on x86-64, nn f32 neon on arm64.)
//   set         linear/mm/bmm/addmm  conv (1x1, im2col / dw 3x3)  linear_q (f32 / i8)  conv2d_q8 (/ dw 3x3)  sdpa  rms_norm/rope/swiglu
//   avx2        gemm avx2            gemm avx2 / dw avx2          avx2 / avx2          i16 avx2 / dw avx2    avx2  llm avx2
//   avxvnni     gemm avx2            gemm avx2 / dw avx2          avx2 / avxvnni       i8 avxvnni / dw       avx2  llm avx2
//   avx512      gemm avx512          gemm avx512 / dw avx2        avx512 / avx2        i16 avx2 / dw avx2    avx2  llm avx2
//   avx512vnni  gemm avx512          gemm avx512 / dw avx2        avx512 / avx512vnni  i8 avx512vnni / dw    avx2  llm avx2
//   neon        gemm neon            gemm neon / dw neon          neon / neon          i16 neon / dw neon    neon  llm neon
//   neondot     gemm neon            gemm neon / dw neon          neon / neondot       i8 neondot / dw neon  neon  llm neon
//   neoni8mm    gemm neon            gemm neon / dw neon          neon / neoni8mm      i8 neondot / dw neon  neon  llm neon
#include <cstring>

#include "optimized.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

template <const GemmKernels& G>
Error linear_k(KernelContext& c, Value** a) {
  return linear_with(c, a, G);
}
template <const GemmKernels& G>
void matmul_k(KernelContext& c, const Matmul& p) {
  matmul_with(c, p, G);
}
template <const GemmKernels& G>
Error mm_k(KernelContext& c, Value** a) {
  return mm_with(c, a, matmul_k<G>);
}
template <const GemmKernels& G>
Error bmm_k(KernelContext& c, Value** a) {
  return bmm_with(c, a, matmul_k<G>);
}
template <const GemmKernels& G>
Error addmm_k(KernelContext& c, Value** a) {
  return addmm_with(c, a, matmul_k<G>);
}
template <const GemmKernels& G, const DwConv3x3Fn& D>
Error conv_k(KernelContext& c, Value** a) {
  return conv_with(c, a, G, D);
}
template <const GemmKernels& G, const LinearQF32Kernels& F, const LinearQI8Kernels& I>
Error linear_q_k(KernelContext& c, Value** a) {
  return linear_q_with(c, a, G, F, I);
}
template <const LinearQI8Kernels& I>
Error linear_q_packed_k(KernelContext& c, Value** a) {
  return linear_q_packed_with(c, a, I);
}
template <const GemmKernels& G, const DwConv3x3Fn& D>
Error conv_clamp_k(KernelContext& c, Value** a) {
  return convolution_clamp_with(c, a, conv_k<G, D>);
}
template <const ConvQ8Kernels& Q, const DwConv3x3Fn& D>
Error conv2d_q8_k(KernelContext& c, Value** a) {
  return conv2d_q8_with(c, a, Q, D);
}
template <const ConvQ8Kernels& Q, const DwConv3x3Fn& D>
Error conv2d_q8_packed_k(KernelContext& c, Value** a) {
  return conv2d_q8_packed_with(c, a, Q, D);
}
template <const ConvQ8Kernels& Q, const ConvF32Kernels& C>
Error conv2d_q8_cl_k(KernelContext& c, Value** a) {
  return conv2d_q8_channels_last_with(c, a, Q, C);
}
template <const ConvF32Kernels& C>
Error conv2d_packed_k(KernelContext& c, Value** a) {
  return conv2d_packed_with(c, a, C, nullptr);
}
template <const ConvF32Kernels& C, const NnKernels& N>
Error conv2d_packed_act_k(KernelContext& c, Value** a) {
  return conv2d_packed_with(c, a, C, &N);
}
template <const ConvF32Kernels& C>
Error conv2d_winograd_k(KernelContext& c, Value** a) {
  return conv2d_winograd_with(c, a, C, nullptr);
}
template <const ConvF32Kernels& C, const NnKernels& N>
Error conv2d_winograd_act_k(KernelContext& c, Value** a) {
  return conv2d_winograd_with(c, a, C, &N);
}
template <const ConvF32Kernels& C>
Error max_pool_cl_k(KernelContext& c, Value** a) {
  return max_pool2d_channels_last_with(c, a, C);
}
template <const SdpaRowsFn& R, const SdpaRowsHalfFn& H>
Error sdpa_k(KernelContext& c, Value** a) {
  return sdpa_with(c, a, R, H);
}
template <const LlmKernels& L>
Error rms_norm_k(KernelContext& c, Value** a) {
  return rms_norm_with_kernels(c, a, L);
}
template <const LlmKernels& L>
Error rope_k(KernelContext& c, Value** a) {
  return rope_with_kernels(c, a, L);
}
template <const LlmKernels& L>
Error swiglu_k(KernelContext& c, Value** a) {
  return swiglu_with_kernels(c, a, L);
}
template <const NnKernels& N>
Error layer_norm_k(KernelContext& c, Value** a) {
  return layer_norm_with_kernels(c, a, N);
}
template <const NnKernels& N>
Error softmax_k(KernelContext& c, Value** a) {
  return softmax_with_kernels(c, a, N);
}
template <const NnKernels& N>
Error gelu_k(KernelContext& c, Value** a) {
  return gelu_with_kernels(c, a, N);
}
template <const NnKernels& N, bool Swish>
Error hard_k(KernelContext& c, Value** a) {
  return hard_activation_with_kernels(c, a, N, Swish);
}
template <const NnKernels& N, bool Silu>
Error logistic_k(KernelContext& c, Value** a) {
  return logistic_with_kernels(c, a, N, Silu);
}
template <const NnKernels& N>
Error lookup_int8_k(KernelContext& c, Value** a) {
  return lookup_int8_with_kernels(c, a, N);
}
template <const NnKernels& N>
Error permute_k(KernelContext& c, Value** a) {
  return permute_with_kernels(c, a, N);
}

#define POCKET_KERNEL_SET(G, D, F, I, Q, R, H, L, C, N)                                             \
  {                                                                                              \
    {"aten::addmm", addmm_k<G>}, {"aten::bmm", bmm_k<G>}, {"aten::convolution", conv_k<G, D>},   \
        {"aten::linear", linear_k<G>}, {"aten::mm", mm_k<G>},                                    \
        {"pocket::conv2d_q8", conv2d_q8_k<Q, D>}, {"pocket::conv2d_q8_packed", conv2d_q8_packed_k<Q, D>}, \
        {"pocket::conv2d_q8_channels_last", conv2d_q8_cl_k<Q, C>},                                 \
        {"pocket::conv2d_packed", conv2d_packed_k<C>},                                           \
        {"pocket::conv2d_packed.act", conv2d_packed_act_k<C, N>},                                \
        {"pocket::conv2d_winograd", conv2d_winograd_k<C>},                                       \
        {"pocket::conv2d_winograd.act", conv2d_winograd_act_k<C, N>},                            \
        {"pocket::max_pool2d_channels_last", max_pool_cl_k<C>},                                  \
        {"pocket::convolution_clamp", conv_clamp_k<G, D>},                                       \
        {"pocket::linear_q", linear_q_k<G, F, I>}, {"pocket::linear_q_packed", linear_q_packed_k<I>}, \
        {"pocket::sdpa", sdpa_k<R, H>},                                                          \
        {"pocket::rms_norm", rms_norm_k<L>}, {"pocket::rope", rope_k<L>},                        \
        {"pocket::swiglu", swiglu_k<L>},                                                         \
        {"aten::native_layer_norm", layer_norm_k<N>}, {"aten::_softmax", softmax_k<N>},         \
        {"aten::gelu", gelu_k<N>}, {"aten::permute", permute_k<N>},                              \
        {"aten::hardswish", hard_k<N, true>}, {"aten::hardsigmoid", hard_k<N, false>},           \
        {"aten::silu", logistic_k<N, true>}, {"aten::sigmoid", logistic_k<N, false>},            \
        {"pocket::lookup_int8", lookup_int8_k<N>},                                               \
  }

struct KernelSet {
  const char* name;
  Span<const OptimizedKernel> kernels;
};

#if defined(__x86_64__)
const OptimizedKernel kAvx2[] = POCKET_KERNEL_SET(kGemmAvx2, kDwConv3x3Avx2, kLinearQF32Avx2, kLinearQI8Avx2,
                                                  kConvQ8I16Avx2, kSdpaAvx2, kSdpaHalfAvx2, kLlmF32Avx2, kConvF32Avx2, kNnF32Avx2);
#if POCKET_HAVE_AVXVNNI
const OptimizedKernel kAvxVnni[] = POCKET_KERNEL_SET(kGemmAvx2, kDwConv3x3Avx2, kLinearQF32Avx2, kLinearQI8AvxVnni,
                                                     kConvQ8I8AvxVnni, kSdpaAvx2, kSdpaHalfAvx2, kLlmF32Avx2, kConvF32Avx2, kNnF32Avx2);
#endif
const OptimizedKernel kAvx512[] = POCKET_KERNEL_SET(kGemmAvx512, kDwConv3x3Avx2, kLinearQF32Avx512, kLinearQI8Avx2,
                                                    kConvQ8I16Avx2, kSdpaAvx2, kSdpaHalfAvx2, kLlmF32Avx2, kConvF32Avx512, kNnF32Avx2);
const OptimizedKernel kAvx512Vnni[] =
    POCKET_KERNEL_SET(kGemmAvx512, kDwConv3x3Avx2, kLinearQF32Avx512, kLinearQI8Avx512Vnni, kConvQ8I8Avx512Vnni,
                      kSdpaAvx2, kSdpaHalfAvx2, kLlmF32Avx2, kConvF32Avx512, kNnF32Avx2);
#endif
#if defined(__aarch64__)
const OptimizedKernel kNeon[] = POCKET_KERNEL_SET(kGemmNeon, kDwConv3x3Neon, kLinearQF32Neon, kLinearQI8Neon,
                                                  kConvQ8I16Neon, kSdpaNeon, kSdpaHalfNeon, kLlmF32Neon, kConvF32Neon, kNnF32Neon);
const OptimizedKernel kNeonDot[] = POCKET_KERNEL_SET(kGemmNeon, kDwConv3x3Neon, kLinearQF32Neon, kLinearQI8NeonDot,
                                                     kConvQ8I8NeonDot, kSdpaNeon, kSdpaHalfNeon, kLlmF32Neon, kConvF32Neon, kNnF32Neon);
#if POCKET_HAVE_I8MM
const OptimizedKernel kNeonI8mm[] = POCKET_KERNEL_SET(kGemmNeon, kDwConv3x3Neon, kLinearQF32Neon, kLinearQI8NeonI8mm,
                                                      kConvQ8I8NeonDot, kSdpaNeon, kSdpaHalfNeon, kLlmF32Neon, kConvF32Neon, kNnF32Neon);
#endif
#endif

template <size_t N>
KernelSet set(const char* name, const OptimizedKernel (&k)[N]) {
  return {name, {k, N}};
}

KernelSet select(const CpuFeatures& f) {
#if defined(__x86_64__)
  if (f.avx512_vnni && f.avx512 && f.avx2_fma) return set("avx512vnni", kAvx512Vnni);
  if (f.avx512 && f.avx2_fma) return set("avx512", kAvx512);
#if POCKET_HAVE_AVXVNNI
  if (f.avx_vnni && f.avx2_fma) return set("avxvnni", kAvxVnni);
#endif
  if (f.avx2_fma) return set("avx2", kAvx2);
#endif
#if defined(__aarch64__)
#if POCKET_HAVE_I8MM
  if (f.neon && f.dotprod && f.i8mm) return set("neoni8mm", kNeonI8mm);
#endif
  if (f.neon && f.dotprod) return set("neondot", kNeonDot);
  if (f.neon) return set("neon", kNeon);
#endif
  (void)f;
  return {"portable", {}};
}

const FeatureInfo kFeatures[] = {
    {"avx2_fma", &CpuFeatures::avx2_fma}, {"avx512", &CpuFeatures::avx512}, {"avx512_vnni", &CpuFeatures::avx512_vnni},
    {"avx_vnni", &CpuFeatures::avx_vnni},
    {"neon", &CpuFeatures::neon},         {"dotprod", &CpuFeatures::dotprod}, {"i8mm", &CpuFeatures::i8mm},
};

}  // namespace

Span<const OptimizedKernel> optimized_kernels(const CpuFeatures& features) { return select(features).kernels; }

const char* kernel_set_name(const CpuFeatures& features) { return select(features).name; }

Span<const FeatureInfo> feature_list() { return {kFeatures, sizeof kFeatures / sizeof kFeatures[0]}; }

KernelFn kernel_for(const char* name, const CpuFeatures& features) {
  for (const OptimizedKernel& k : optimized_kernels(features))
    if (strcmp(k.name, name) == 0) return k.fn;
  for (const KernelEntry& e : portable_kernels())
    if (strcmp(e.name, name) == 0) return e.fn;
  return nullptr;
}

}  // namespace detail
}  // namespace pocket
