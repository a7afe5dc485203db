// pocket::sdpa, NEON (arm64): the query rows of sdpa_f32_tile.inc over 4-float vectors (exp as
// sdpa_f32_avx2.cpp), float16 caches widened per load (FCVTL).
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>
#include <type_traits>

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
  static V load_half(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static V loadn_half(const uint16_t* p, int n) {
    uint16_t part[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; ++i) part[i] = p[i];
    return load_half(part);
  }
};

}  // namespace

#include "sdpa_f32_tile.inc"

extern const SdpaRowsFn kSdpaNeon = sdpa_rows<NeonSdpa, float>;
extern const SdpaRowsHalfFn kSdpaHalfNeon = sdpa_rows<NeonSdpa, uint16_t>;

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__
