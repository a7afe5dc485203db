// pocket::sdpa, NEON (arm64): the query rows of sdpa_f32_tile.inc over 4-float vectors (exp as
// sdpa_f32_avx2.cpp), and the float16 caches' widening (FCVTL).
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET

namespace pocket {
namespace detail {

namespace {

#include "neon_helpers.inc"

// The sdpa loop's traits (sdpa_f32_tile.inc): the NEON fp32 vector traits and exp. V is not
// prefetched: not measured on arm64 hardware.
struct NeonSdpa : NeonF32 {
  static constexpr bool kFetchV = false;
  static V mul(V a, V b) { return vmulq_f32(a, b); }
  static V set1(float x) { return vdupq_n_f32(x); }
  static float hsum(V v) { return vaddvq_f32(v); }
  static V exp(V x) { return exp_nonpositive(x); }
};

}  // namespace

#include "sdpa_f32_tile.inc"

namespace {

// float16 -> float32 (fcvtl, exact, as half_to_float).
void widen_half(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  for (; i < n; ++i) {
    const uint16_t one[4] = {src[i], 0, 0, 0};
    float out[4];
    vst1q_f32(out, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(one))));
    dst[i] = out[0];
  }
}

}  // namespace

extern const SdpaRowsFn kSdpaNeon = sdpa_rows<NeonSdpa>;
extern const WidenHalfFn kWidenHalfNeon = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
