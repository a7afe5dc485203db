// pocket::conv2d_q8 microkernels, AVX2 (x86-64): int16 x - zp times int16 weights, pairs of
// channels per VPMADDWD lane (|255 · 128| · 2 fits with no saturation), 8 output channels
// per vector. Tile: conv_q8_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

struct Avx2 {
  using E = int16_t;
  using Acc = __m256i;
  using W = __m256i;
  using B = __m256i;
  static constexpr int kLanes = 8, kKc = 2;
  static constexpr bool kStore8x8 = false;
  POCKET_TARGET static Acc zero() { return _mm256_setzero_si256(); }
  POCKET_TARGET static W load_w(const E* w) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)); }
  POCKET_TARGET static B bcast(const E* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm256_set1_epi32(q);
  }
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo,
                                  float hi, float* out) {
    const __m256i a = _mm256_sub_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)));
    const __m256d a0 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(a)), _mm256_loadu_pd(mult));
    const __m256d a1 = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(a, 1)), _mm256_loadu_pd(mult + 4));
    const __m256 f = _mm256_set_m128(_mm256_cvtpd_ps(a1), _mm256_cvtpd_ps(a0));
    const __m256 y = _mm256_add_ps(f, _mm256_loadu_ps(bias));
    _mm256_storeu_ps(out, _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), y)));  // NaN y: kept
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I16Avx2 = {2, 2, 0, conv_q8_quantize_row<Avx2>, conv_q8_quantize_floats,
   conv_q8_tile_fn<Avx2, 6, 1>(), conv_q8_tile_fn<Avx2, 6, 2>()};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
