// pocket::linear_q_packed microkernels, NEON with the int8 matrix multiply extension (arm64
// FEAT_I8MM, Armv8.6+; e.g. Cortex-A710/X2 and later, Apple A15/M2 and later): tiles of
// several rows of x (a prefill) take SMMLA, which multiplies 2 rows of 8 activation bytes by
// 8 bytes of each of 2 channels into a 2 x 2 block of int32 sums: per step a weight byte
// serves 2 rows, where SDOT's serves one. One row (decode) and odd rows take SDOT, as in
// linear_qp_i8_neondot.cpp. Traits: linear_qp_i8_arm.inc; tile loop: linear_qp_tile.inc.
#include "ukernels.h"
#if defined(__aarch64__) && POCKET_HAVE_I8MM

#include <arm_neon.h>

#include <cstring>

#define POCKET_TARGET __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))

namespace pocket {
namespace detail {

#include "linear_qp_i8_arm.inc"

namespace {

struct NeonI8mm : NeonDot {
  static constexpr bool kMatmul = true;
  static constexpr int kMr = 4;
  // The 8 bytes of channels 0, 1 (p0) and 2, 3 (p1) of a vector from its columns 0-3 (a) and
  // 4-7 (b): SMMLA's right operand, one channel per 64-bit half.
  POCKET_TARGET static void pairs(W a, W b, W* p0, W* p1) {
    *p0 = vreinterpretq_s8_s32(vzip1q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
    *p1 = vreinterpretq_s8_s32(vzip2q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
  }
  // 8 activation bytes of each of two rows: SMMLA's left operand.
  POCKET_TARGET static W rows(const int8_t* x0, const int8_t* x1) { return vcombine_s8(vld1_s8(x0), vld1_s8(x1)); }
  // acc (row 0: channels 0, 1; row 1: channels 0, 1) + the products of rows a and channels b.
  POCKET_TARGET static Acc mmla(Acc acc, W a, W b) { return vmmlaq_s32(acc, a, b); }
  // The 2 x 2 blocks of channels 0, 1 (m0) and 2, 3 (m1) as each row's 4 channel lanes.
  POCKET_TARGET static void unzip(Acc m0, Acc m1, Acc* row0, Acc* row1) {
    *row0 = vreinterpretq_s32_s64(vzip1q_s64(vreinterpretq_s64_s32(m0), vreinterpretq_s64_s32(m1)));
    *row1 = vreinterpretq_s32_s64(vzip2q_s64(vreinterpretq_s64_s32(m0), vreinterpretq_s64_s32(m1)));
  }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8NeonI8mm = {linear_qp_run<NeonI8mm>, linear_qp_quantize_row_neon};

}  // namespace detail
}  // namespace pocket

#endif  // __aarch64__ && POCKET_HAVE_I8MM
