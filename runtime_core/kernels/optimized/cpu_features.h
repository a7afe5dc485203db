// CPU features the optimized kernels need, detected at run time (never assumed at build
// time: shipped code is built without -march=native).
#pragma once

namespace pocket {
namespace detail {

struct CpuFeatures {
  bool avx2_fma = false;     // x86-64: AVX2 + FMA (+ F16C, which every AVX2 CPU has)
  bool avx512 = false;       // x86-64: AVX-512 F, BW, VL
  bool avx512_vnni = false;  // x86-64: AVX-512 VNNI (int8 dot products)
  bool avx_vnni = false;     // x86-64: AVX-VNNI (VEX VPDPBUSD on 256 bits: Alder Lake, Zen 5 and later)
  bool neon = false;         // arm64: always
  bool dotprod = false;      // arm64: SDOT/UDOT
  bool i8mm = false;         // arm64: SMMLA
};

// Detected once; POCKET_KERNELS caps them at a kernel set (portable, avx2, avxvnni,
// avx512, neon, neondot: see cpu_features.cpp).
const CpuFeatures& cpu_features();

}  // namespace detail
}  // namespace pocket
