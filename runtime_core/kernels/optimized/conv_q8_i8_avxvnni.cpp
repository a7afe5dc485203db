// pocket::conv2d_q8 microkernels, AVX-VNNI (x86-64 without AVX-512: Alder Lake and later
// client cores): bytes xq + 128 times int8 weights, 4 channels per VEX VPDPBUSD lane, 8 output
// channels per vector. Tile: conv_q8_tile.inc.
#include "ukernels.h"
#if defined(__x86_64__) && POCKET_HAVE_AVXVNNI

#include <immintrin.h>

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

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
  POCKET_TARGET static Acc start(const int32_t* corr) {  // -corr: sums that need no correction
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr)));
  }
  // requantize of four vectors of sums that started from start(corr), as the AVX-512 VNNI
  // file's: the float steps, saturating packs (bytes of vectors 0-3 in each 128-bit half:
  // channels 0-3, then 4-7), the zero point added in int16 with saturation, the lower, then
  // upper clamp on the bytes; a dword permute makes quadword k vector k's 8 bytes. Unless
  // in_range, the floats are first clamped to hi (a NaN converts to INT_MIN: lo).
  static constexpr bool kRequantize4 = true;
  template <bool kWhole>
  POCKET_TARGET static void requantize4(const Acc* acc, const float* const* mult, const float* const* bias, float lo,
                                        float hi, int32_t zp, bool in_range, int8_t* const* out, const int* n) {
    const auto scaled = [&](int k) POCKET_TARGET {
      return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[k]), _mm256_loadu_ps(mult[k])),
                           _mm256_loadu_ps(bias[k]));
    };
    __m256i q[4];  // VCVTPS2DQ: to nearest even in the default rounding mode
    if (in_range) {
      for (int k = 0; k < 4; ++k) q[k] = _mm256_cvtps_epi32(scaled(k));
    } else {
      for (int k = 0; k < 4; ++k) q[k] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_set1_ps(hi), scaled(k)));
    }
    const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(zp));
    __m256i b = _mm256_packs_epi16(_mm256_adds_epi16(_mm256_packs_epi32(q[0], q[1]), z),
                                   _mm256_adds_epi16(_mm256_packs_epi32(q[2], q[3]), z));
    b = _mm256_max_epi8(b, _mm256_set1_epi8(static_cast<char>(static_cast<int32_t>(lo) + zp)));
    b = _mm256_min_epi8(b, _mm256_set1_epi8(static_cast<char>(static_cast<int32_t>(hi) + zp)));
    b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    alignas(32) int8_t bytes[4][8];
    if (!kWhole) _mm256_store_si256(reinterpret_cast<__m256i*>(bytes), b);
    const __m128i half[2] = {_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)};
    for (int k = 0; k < 4; ++k) {
      if (kWhole || n[k] == 8) {
        const __m128i h = half[k / 2];
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out[k]), k % 2 == 0 ? h : _mm_unpackhi_epi64(h, h));
      } else if (n[k] > 0) {
        std::memcpy(out[k], bytes[k], static_cast<size_t>(n[k]));
      }
    }
  }
  // conv_q8_dw_expand's quads, 8 channels (a group) at a time: the four taps' 8 bytes
  // interleaved by bytes (a with b, c with d), then by 16-bit pairs; the rest one by one.
  POCKET_TARGET static void expand_quads(const int8_t* a, const int8_t* b, const int8_t* c, const int8_t* d,
                                         int64_t n, uint8_t offset, uint32_t* out, int64_t gs) {
    const __m128i flip = _mm_set1_epi8(static_cast<char>(offset));
    const auto taps = [](const int8_t* p) POCKET_TARGET {
      return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i ab = _mm_unpacklo_epi8(taps(a + i), taps(b + i)), cd = _mm_unpacklo_epi8(taps(c + i), taps(d + i));
      __m128i* o = reinterpret_cast<__m128i*>(out + i / 8 * gs);
      _mm_storeu_si128(o, _mm_xor_si128(_mm_unpacklo_epi16(ab, cd), flip));
      _mm_storeu_si128(o + 1, _mm_xor_si128(_mm_unpackhi_epi16(ab, cd), flip));
    }
    for (; i < n; ++i) out[i / 8 * gs + i % 8] = dw_quad_word(a[i], b[i], c[i], d[i], offset);
  }
  // kExpandSlide (the AVX-512 VNNI file's, on 8 channels): column m of a group is column m - 1
  // shifted down by H bytes, OR the H new pixels' bytes (each pixel's 8 channels broadcast to
  // both 128-bit halves, one byte shuffle putting channel 4L+j in byte b of dword j of half
  // L; flipped, and masked past n in a last group of fewer than 8 channels, off the chain).
  // Two groups at a time: the shift and OR per column are a dependency chain.
  static constexpr bool kExpandSlide = true;
  template <int H>
  POCKET_TARGET static void expand_slide(const int8_t* a, int64_t px, int64_t cols, int64_t n, uint8_t offset,
                                         uint32_t* out, int64_t out_step, int64_t gs) {
    static_assert(H >= 1 && H <= 3, "a column shares 4 - H pixels with the previous one");
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) slide_groups<H, 2, true>(a + i, px, cols, 8, offset, out + i / 8 * gs, out_step, gs);
    for (; i + 8 <= n; i += 8) slide_groups<H, 1, true>(a + i, px, cols, 8, offset, out + i / 8 * gs, out_step, gs);
    if (i < n) slide_groups<H, 1, false>(a + i, px, cols, n - i, offset, out + i / 8 * gs, out_step, gs);
  }
  template <int H, int NG, bool kWhole>
  POCKET_TARGET static void slide_groups(const int8_t* a, int64_t px, int64_t cols, int64_t n, uint8_t offset,
                                         uint32_t* o, int64_t out_step, int64_t gs) {
    struct Controls {
      alignas(32) int8_t b[4][32];
    };
    static constexpr Controls kPlace = [] {
      Controls c{};
      for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 32; ++k) c.b[b][k] = static_cast<int8_t>(k % 4 == b ? k / 16 * 4 + k % 16 / 4 : -128);
      return c;
    }();
    const uint32_t flip = uint32_t{offset} * 0x01010101u;
    const __m256i live = tail_mask(n);  // dwords past n: zero
    const auto placed = [&](int64_t k, int g, int b) POCKET_TARGET {  // pixel k's channels in byte b of each dword
      int64_t v = 0;
      std::memcpy(&v, a + k * px + 8 * g, kWhole ? 8 : static_cast<size_t>(n));
      const __m256i control = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPlace.b[b]));
      return _mm256_shuffle_epi8(_mm256_set1_epi64x(v), control);
    };
    const auto fresh = [&](__m256i v, uint32_t f) POCKET_TARGET {  // flipped, dwords past n zero
      v = _mm256_xor_si256(v, _mm256_set1_epi32(static_cast<int32_t>(f)));
      return kWhole ? v : _mm256_and_si256(v, live);
    };
    __m256i q[NG];
    POCKET_UNROLL for (int g = 0; g < NG; ++g) {
      q[g] = fresh(_mm256_or_si256(_mm256_or_si256(placed(0, g, 0), placed(1, g, 1)),
                                   _mm256_or_si256(placed(2, g, 2), placed(3, g, 3))), flip);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + g * gs), q[g]);
    }
    for (int64_t m = 1; m < cols; ++m) {
      POCKET_UNROLL for (int g = 0; g < NG; ++g) {
        __m256i v = placed(H * m + 3, g, 3);
        for (int b = 4 - H; b < 3; ++b) v = _mm256_or_si256(v, placed(H * m + b, g, b));
        q[g] = _mm256_or_si256(_mm256_srli_epi32(q[g], 8 * H), fresh(v, flip << (8 * (4 - H))));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + g * gs + m * out_step), q[g]);
      }
    }
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

extern const ConvQ8Kernels kConvQ8I8AvxVnni = conv_q8_i8_kernels<AvxVnni, 128, 6, 1, 2, 2>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__ && POCKET_HAVE_AVXVNNI
