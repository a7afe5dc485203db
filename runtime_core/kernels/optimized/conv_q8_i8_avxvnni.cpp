// pocket::conv2d_q8 microkernels, AVX-VNNI (x86-64 without AVX-512: Alder Lake and later
// client cores): bytes xq + 128 times int8 weights, 4 channels per VEX VPDPBUSD lane, 8 output
// channels per vector. Tile: conv_q8_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avxvnni")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

struct AvxVnni {
  using E = uint8_t;
  using Acc = __m256i;
  using W = __m256i;
  using B = __m256i;
  static constexpr int kLanes = 8, kKc = 4;
  static constexpr bool kStore8x8 = false;
  static constexpr bool kRequantize4 = false;
  static constexpr bool kExpandSlide = false;
  static constexpr bool kStoreRes = false;
  POCKET_TARGET static Acc zero() { return _mm256_setzero_si256(); }
  POCKET_TARGET static W load_w(const int8_t* w) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)); }
  POCKET_TARGET static B bcast(const E* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm256_set1_epi32(q);
  }
  POCKET_TARGET static B bcast_raw(const E* x) {  // int8 bytes + 128: the sign bits flipped
    return _mm256_xor_si256(bcast(x), _mm256_set1_epi32(static_cast<int32_t>(0x80808080u)));
  }
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) { return _mm256_dpbusd_avx_epi32(acc, x, w); }
  // conv_q8_dw_expand's quads, 8 channels (a group) at a time: the four taps' 8 bytes
  // interleaved by bytes (a with b, c with d), then by 16-bit pairs; the rest one by one.
  POCKET_TARGET static void expand_quads(const int8_t* a, const int8_t* b, const int8_t* c, const int8_t* d,
                                         int64_t n, uint8_t offset, uint32_t* out, int64_t gs) {
    const __m128i flip = _mm_set1_epi8(static_cast<char>(offset));
    const auto taps = [](const int8_t* p) POCKET_TARGET { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i ab = _mm_unpacklo_epi8(taps(a + i), taps(b + i)), cd = _mm_unpacklo_epi8(taps(c + i), taps(d + i));
      __m128i* o = reinterpret_cast<__m128i*>(out + i / 8 * gs);
      _mm_storeu_si128(o, _mm_xor_si128(_mm_unpacklo_epi16(ab, cd), flip));
      _mm_storeu_si128(o + 1, _mm_xor_si128(_mm_unpackhi_epi16(ab, cd), flip));
    }
    for (; i < n; ++i)
      out[i / 8 * gs + i % 8] = (static_cast<uint32_t>(static_cast<uint8_t>(a[i])) |
                                 static_cast<uint32_t>(static_cast<uint8_t>(b[i])) << 8 |
                                 static_cast<uint32_t>(static_cast<uint8_t>(c[i])) << 16 |
                                 static_cast<uint32_t>(static_cast<uint8_t>(d[i])) << 24) ^
                                (offset * 0x01010101u);
  }
  // conv_q8_requantize_sum per lane: the fp32 traits' (the depthwise store's) on acc - corr.
  POCKET_TARGET static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo,
                                       float hi, int32_t zp, int8_t* out) {
    const __m256i s = _mm256_sub_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)));
    Avx2F32::requantize(_mm256_cvtepi32_ps(s), mult, bias, lo, hi, zp, out);
  }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo,
                                  float hi, float* out) {
    store_conv_q8(acc, corr, mult, bias, lo, hi, out);
  }
};

}  // namespace

#include "conv_q8_tile.inc"

extern const ConvQ8Kernels kConvQ8I8AvxVnni = {1, 128, conv_q8_quantize_row<AvxVnni>, conv_q8_quantize_floats,
    conv_q8_quantize_pixels<AvxVnni>, conv_q8_weight_sums<AvxVnni>, conv_q8_rescale, conv_q8_requantize_values,
    conv_q8_int8_floats,
    {conv_q8_tile_fn<AvxVnni, 6, 1>(), conv_q8_tile_fn<AvxVnni, 6, 2>(), conv_q8_tile_fn<AvxVnni, 6, 2>()},
    conv_q8_dw_expand<AvxVnni>, conv_q8_dw_row<AvxVnni>, AvxVnni::kLanes,
    {conv_q8_tile_fn<AvxVnni, 6, 1, true>(), conv_q8_tile_fn<AvxVnni, 6, 2, true>(),
     conv_q8_tile_fn<AvxVnni, 6, 2, true>()},
    conv_q8_out_params, conv_q8_dw_sums<AvxVnni>};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
