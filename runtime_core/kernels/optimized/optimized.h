// The optimized kernels: same signatures as the portable ones (kernels/tables/*.txt), each
// chosen only when the CPU has the features it was compiled for (detected at run time; ISA
// code is compiled with function-level target attributes, never with global -m flags, and
// files for another architecture compile to nothing).
//
// Naming grammar (after XNNPACK's): a microkernel file is <op>_<variant>_<isa>.cpp, e.g.
// gemm_f32_avx2.cpp, linear_q_i8_avx512vnni.cpp, and defines one microkernel set
// k<Op><Variant><Isa> declared in ukernels.h.
//   op       gemm       fp32 matrix products (aten::linear, mm, bmm, addmm, 1x1 convolution)
//            dwconv3x3  depthwise 3x3 convolution (aten::convolution)
//            linear_q   pocket::linear_q
//            linear_qp  pocket::linear_q_packed (4-bit weights in the kernels' layout)
//            conv_q8    pocket::conv2d_q8, conv2d_q8_packed, conv2d_q8_channels_last (static int8
//                       convolution; channels-last depthwise on int8 through the i8 dot
//                       products, else through conv's depthwise row)
//            conv       pocket::conv2d_packed (channels-last convolution, packed weights),
//                       pocket::conv2d_winograd (3x3 stride 1 by Winograd F(2x2, 3x3), the
//                       weight transformed) and pocket::max_pool2d_channels_last
//            sdpa       pocket::sdpa
//            llm        pocket::rms_norm, rope, swiglu (one set of row functions)
//            nn         aten::native_layer_norm, _softmax (last dim), gelu on contiguous
//                       float32 (row functions; other cases: the portable kernels)
//   variant  f32        float32 activations
//            i8         int8 activations (linear_q act_mode 1 and 2; conv_q8: byte operands)
//            i16        int16 activations (conv_q8 where no 4-way int8 dot product exists;
//                       the file's int8 weights widened as they are loaded)
//   isa      avx2       x86-64 AVX2 + FMA              (CpuFeatures::avx2_fma)
//            avx512     + AVX-512 F, BW, VL            (avx512)
//            avxvnni    AVX2 + FMA + AVX-VNNI (VEX VPDPBUSD, 256 bits; no AVX-512) (avx_vnni)
//            avx512vnni + AVX-512 VNNI                 (avx512_vnni)
//            neon       arm64 Advanced SIMD            (neon)
//            neondot    + SDOT/UDOT                    (dotprod)
//            neoni8mm   + SMMLA                        (i8mm; linear_qp only, else neondot's)
// A body shared by several ISA files of one family is <op>_<variant>_<family>.inc (x86,
// arm), included by each with its own target attribute and instruction choices.
// avx2_helpers.inc: mask, horizontal-sum and exp helpers of the AVX2 + FMA files;
// neon_helpers.inc: the exp of the NEON files; each of these and avx512_helpers.inc also
// defines the ISA's fp32 vector traits (Avx2F32, NeonF32, Avx512F32) that gemm_f32_tile.inc
// and conv_f32_tile.inc take; quant_scales.inc: the scale and min loads of
// the linear_q and linear_qp files (float32, or float16 widened in place: F16C, FCVT), whose
// x86 targets therefore include f16c.
// One loop for every ISA: conv_q8_tile.inc writes the conv_q8 tile (register blocking, the
// k loop, the epilogue and its store) once, as a template over a traits struct that each ISA
// file defines with only its vector operations (types, load, broadcast, dot, store; the i8
// ones also expand_quads for the channels-last depthwise rows, and VNNI a requantize of four
// vectors through saturating packs); the five ISA files are ~80-250 lines each. linear_qp_tile.inc does the same for linear_q_packed (nibble
// split, 4-way dot, float epilogue per span; float16 scales through the traits' hload).
// linear_q_f32_tile.inc is the fp32-activation linear_q (gemv tiles of up to 4 x 4 rows,
// de-quantizing 16 columns per step, or with the scales factored out of each group where the
// traits ask (kFactor); whole-row de-quantization for the GEMM path).
// gemm_f32_tile.inc is the fp32 GEMM (nt tiles reduced with one 4-way horizontal sum, nn
// tiles over a packed panel of B; the ISA files only choose the traits and tile shapes).
// New kernel families follow them. conv_f32_tile.inc is the loop of conv2d_packed (indirect
// GEMM tile over a zero-padded input: one pointer per output position plus one offset per
// tap, broadcast inputs x 16-channel weight rows, bias + residual + clamp epilogue; depthwise
// rows with channels across lanes, 4 pixels per pass), of conv2d_winograd (the same tile
// runs its 16 products, one tap each; the input and output transforms take channels across
// lanes) and of max_pool2d_channels_last (rows with channels across lanes, ATen's max rule in
// the traits' pool_max), driven by conv_packed.cpp. sdpa_f32_tile.inc is sdpa's query rows
// (dot products, softmax, weighted V sum; up to four query heads of one kv head together)
// over the fp32 vector traits plus exp.
// The ISA-independent drivers are <op>.cpp (gemm.cpp, conv.cpp, linear_q.cpp, sdpa.cpp, llm.cpp, nn.cpp):
// argument checks (shared with the portable kernels), threading, cache blocking, and the
// portable fallback for cases the microkernels do not cover. table.cpp combines the best
// microkernel set per op into the op-level kernels and picks them by CPU features.
#pragma once

#include <cstddef>

#include "cpu_features.h"
#include "pocket/kernel.h"

namespace pocket {
namespace detail {

struct OptimizedKernel {
  const char* name;  // as in the portable table, e.g. "aten::linear"
  KernelFn fn;
};

// The optimized kernels for `features` (those a CPU with exactly these features runs), in
// no particular order; empty when none applies.
Span<const OptimizedKernel> optimized_kernels(const CpuFeatures& features);

// Name of the kernel set optimized_kernels(features) returns ("avx2", "avxvnni", "avx512",
// "avx512vnni", "neon", "neondot", "neoni8mm"), or "portable".
const char* kernel_set_name(const CpuFeatures& features);

// For tests and benchmarks. Feature names are the CpuFeatures fields: "avx2_fma", "avx512",
// "avx512_vnni", "avx_vnni", "neon", "dotprod", "i8mm".
struct FeatureInfo {
  const char* name;
  bool CpuFeatures::*flag;
};
Span<const FeatureInfo> feature_list();

// The kernel of `name` ("aten::linear") best_kernels() would choose on a CPU with
// `features`: the optimized one, else the portable one; nullptr for an unknown op.
KernelFn kernel_for(const char* name, const CpuFeatures& features);

}  // namespace detail
}  // namespace pocket
