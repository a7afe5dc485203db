// pocket::conv2d_q8 microkernels, AVX2 (x86-64): int16 x - zp times the file's int8 weights
// widened as they are loaded (VPMOVSXBW, once per step for all mr positions). A channel's
// quad of weights meets a pixel's quad of inputs in two VPMADDWD lanes (|255 · 128| · 2 fits
// with no saturation), so 8 output channels are two vectors of pair sums, added once in the
// epilogue (VPHADDD). Tile: conv_q8_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

struct Avx2 {
  using E = int16_t;
  struct Acc {
    __m256i a, b;  // channels 0-3 and 4-7: per channel the sums of inputs 0-1 and 2-3 of each quad
  };
  using W = Acc;    // channels 0-3 and 4-7: per channel its quad of weights as int16
  using B = __m256i;  // a pixel's quad of int16 inputs in every 64-bit lane
  static constexpr int kLanes = 8, kKc = 4;
  static constexpr bool kStore8x8 = false;
  static constexpr bool kRequantize4 = false;
  static constexpr bool kExpandSlide = false;
  static constexpr bool kStoreRes = false;
  POCKET_TARGET static Acc zero() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
  POCKET_TARGET static W load_w(const int8_t* w) {
    return {_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))),
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)))};
  }
  POCKET_TARGET static B bcast(const E* x) {
    int64_t q;
    std::memcpy(&q, x, 8);
    return _mm256_set1_epi64x(q);
  }
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) {
    return {_mm256_add_epi32(acc.a, _mm256_madd_epi16(w.a, x)), _mm256_add_epi32(acc.b, _mm256_madd_epi16(w.b, x))};
  }
  // hadd: channels 0 1 4 5 | 2 3 6 7; the 64-bit permute puts them in order.
  POCKET_TARGET static __m256i channel_sums(Acc acc) {
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc.a, acc.b), 0xD8);
  }
  // conv_q8_requantize_sum per channel: the fp32 traits' (the depthwise store's) on the sums - corr.
  POCKET_TARGET static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo,
                                       float hi, int32_t zp, int8_t* out) {
    const __m256i s = _mm256_sub_epi32(channel_sums(acc), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)));
    Avx2F32::requantize(_mm256_cvtepi32_ps(s), mult, bias, lo, hi, zp, out);
  }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo,
                                  float hi, float* out) {
    store_conv_q8(channel_sums(acc), corr, mult, bias, lo, hi, out);
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I16Avx2 = {2, 0, conv_q8_quantize_row<Avx2>, conv_q8_quantize_floats,
    conv_q8_quantize_pixels<Avx2>, nullptr, conv_q8_rescale, conv_q8_requantize_values,
    conv_q8_int8_floats,
    {conv_q8_tile_fn<Avx2, 6, 1>(), conv_q8_tile_fn<Avx2, 6, 1>(), conv_q8_tile_fn<Avx2, 6, 1>()},
    nullptr, nullptr, 0, {}, conv_q8_out_params, nullptr};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
