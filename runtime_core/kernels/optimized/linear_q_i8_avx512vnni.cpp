// pocket::linear_q with int8 activations (act_mode 1 and 2), AVX-512 VNNI (x86-64):
// VPDPBUSD (u8 x s8, 4-way, into int32) on 256-bit vectors, 32 columns per step. Body:
// linear_q_i8_x86.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace pocket {
namespace detail {

constexpr int kBigMr = 4, kBigNr = 4, kRowNr = 8;
constexpr bool kVnni = true;
#include "linear_q_i8_x86.inc"

extern const LinearQI8Kernels kLinearQI8Avx512Vnni = {run, offset_of};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
