// pocket::conv2d_q8 microkernels, AVX-512 VNNI (x86-64): bytes xq + 128 times int8 weights,
// 4 channels per VPDPBUSD lane, 16 output channels per vector. Tile: conv_q8_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace pocket {
namespace detail {

namespace {

#include "avx512_helpers.inc"

struct Vnni {
  using E = uint8_t;
  using Acc = __m512i;
  using W = __m512i;
  using B = __m512i;
  static constexpr int kLanes = 16, kKc = 4;
  static constexpr bool kStore8x8 = true;
  POCKET_TARGET static Acc zero() { return _mm512_setzero_si512(); }
  POCKET_TARGET static W load_w(const int8_t* w) { return _mm512_loadu_si512(w); }
  POCKET_TARGET static B bcast(const E* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm512_set1_epi32(q);
  }
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) { return _mm512_dpbusd_epi32(acc, x, w); }
  // conv_q8_requantize_sum per lane: the fp32 traits' (the depthwise store's) on acc - corr.
  POCKET_TARGET static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo,
                                       float hi, int32_t zp, int8_t* out) {
    Avx512F32::requantize(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_loadu_si512(corr))), mult, bias, lo, hi,
                          zp, out);
  }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo,
                                  float hi, float* out) {
    const __m512i a = _mm512_sub_epi32(acc, _mm512_loadu_si512(corr));
    const __m512d a0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(a)), _mm512_loadu_pd(mult));
    const __m512d a1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(a, 1)), _mm512_loadu_pd(mult + 8));
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    const __m256 y0 = _mm256_add_ps(_mm512_cvtpd_ps(a0), _mm256_loadu_ps(bias));
    const __m256 y1 = _mm256_add_ps(_mm512_cvtpd_ps(a1), _mm256_loadu_ps(bias + 8));
    _mm256_storeu_ps(out, _mm256_min_ps(vhi, _mm256_max_ps(vlo, y0)));  // NaN y: the second operand
    _mm256_storeu_ps(out + 8, _mm256_min_ps(vhi, _mm256_max_ps(vlo, y1)));
  }
  // An 8x8 transpose (unpack, shuffle, then swap 128-bit halves) and 8 row stores.
  POCKET_TARGET static void store8x8(const float* in, int ld, float* y, int64_t plane) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * ld);
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
      for (int h = 0; h < 2; ++h) {
        u[i + 2 * h] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 2 * h + 1] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], _MM_SHUFFLE(3, 2, 3, 2));
      }
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_ps(y + k * plane, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
      _mm256_storeu_ps(y + (k + 4) * plane, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
    }
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I8Avx512Vnni = {1, 128, conv_q8_quantize_row<Vnni>, conv_q8_quantize_floats,
    conv_q8_quantize_pixels<Vnni>, conv_q8_weight_sums<Vnni>, conv_q8_rescale, conv_q8_requantize_values,
    conv_q8_int8_floats,
                                                   conv_q8_tile_fn<Vnni, 8, 1>(), conv_q8_tile_fn<Vnni, 8, 2>()};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
