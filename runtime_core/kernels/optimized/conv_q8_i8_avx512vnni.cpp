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

#include <algorithm>  // conv_q8_tile.inc
#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace pocket {
namespace detail {

namespace {

#include "avx512_helpers.inc"

// The 4x4 transpose of a vector's dwords in lanes: dword j of 128-bit lane i goes to dword i
// of lane j.
POCKET_TARGET inline __m512i transpose_lanes(__m512i v) {
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v);
}

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
  POCKET_TARGET static B bcast_raw(const E* x) {  // int8 bytes + 128: the sign bits flipped
    return _mm512_xor_si512(bcast(x), _mm512_set1_epi32(static_cast<int32_t>(0x80808080u)));
  }
  POCKET_TARGET static Acc dot(Acc acc, W w, B x) { return _mm512_dpbusd_epi32(acc, x, w); }
  POCKET_TARGET static Acc start(const int32_t* corr) {  // -corr: sums that need no correction
    return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(corr));
  }
  // conv_q8_dw_expand's quads, 16 channels (a group) at a time: the four taps' 16 bytes as the
  // four 128-bit lanes, a dword permute (lane j gets each tap's channels 4j..4j+3), then a 4x4
  // byte transpose in each lane (the tail's loads and store masked).
  POCKET_TARGET static void expand_quads(const int8_t* a, const int8_t* b, const int8_t* c, const int8_t* d,
                                         int64_t n, uint8_t offset, uint32_t* out, int64_t gs) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(offset));
    const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const auto quads = [&](__m512i taps) POCKET_TARGET {  // lane j: tap j's 16 bytes
      return _mm512_xor_si512(_mm512_shuffle_epi8(transpose_lanes(taps), bytes), flip);
    };
    if (n == 16 && b == a + 16 && c == b + 16 && d == c + 16) {  // 16 channels, adjacent columns
      _mm512_storeu_si512(out, quads(_mm512_loadu_si512(a)));
      return;
    }
    for (int64_t i = 0; i < n; i += 16) {
      const bool whole = n - i >= 16;
      const __mmask16 m = whole ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
      __m512i z = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(m, a + i));
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(m, b + i), 1);
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(m, c + i), 2);
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(m, d + i), 3);
      z = quads(z);
      if (whole)
        _mm512_storeu_si512(out + i / 16 * gs, z);
      else
        _mm512_mask_storeu_epi32(out + i / 16 * gs, m, z);
    }
  }
  // kExpandSlide: `cols` adjacent columns of DwConvQ8Expand's quads whose taps are adjacent
  // pixels (px bytes apart), columns H pixels apart: column m (out + m · out_step) from pixels
  // H·m..H·m+3 of a, n channels (groups of 16 gs words apart), lanes past n zero. A column's
  // quads are the previous column's shifted down by H bytes, the H new pixels' bytes on top:
  // each new pixel's 16 channels broadcast to the four 128-bit lanes and one byte shuffle puts
  // channel 4L+j in byte b of dword j of lane L. Per column that is H loads, H shuffles, a shift and an OR
  // (the last with the flip, one VPTERNLOGD), no transposes. (Two or four independent
  // chains per 16 channels, the row cut in parts, measured no faster: not latency bound.)
  static constexpr bool kExpandSlide = true;
  template <int H>
  POCKET_TARGET static void expand_slide(const int8_t* a, int64_t px, int64_t cols, int64_t n, uint8_t offset,
                                         uint32_t* out, int64_t out_step, int64_t gs) {
    static_assert(H >= 1 && H <= 3, "a column shares 4 - H pixels with the previous one");
    struct Controls {
      alignas(64) int8_t b[4][64];
    };
    static constexpr Controls kPlace = [] {
      Controls c{};
      for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 64; ++k) c.b[b][k] = static_cast<int8_t>(k % 4 == b ? k / 16 * 4 + k % 16 / 4 : -128);
      return c;
    }();
    const uint32_t flip = uint32_t{offset} * 0x01010101u;
    const __m512i flip_all = _mm512_set1_epi32(static_cast<int32_t>(flip));
    const __m512i flip_new = _mm512_set1_epi32(static_cast<int32_t>(flip << (8 * (4 - H))));
    for (int64_t i = 0; i < n; i += 16) {
      const bool whole = n - i >= 16;
      const __mmask16 live = lanes(static_cast<int>(std::min<int64_t>(16, n - i)));
      // pixel k's channels in byte b of each dword
      const auto placed = [&](int64_t k, int b) POCKET_TARGET {
        const int8_t* p = a + k * px + i;
        const __m128i v = whole ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_maskz_loadu_epi8(live, p);
        return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(v),
                                   _mm512_load_si512(static_cast<const void*>(kPlace.b[b])));
      };
      const auto first = [&](int64_t m) POCKET_TARGET {  // column m from its four pixels
        const __m512i lo = _mm512_or_si512(placed(H * m, 0), placed(H * m + 1, 1));
        const __m512i hi = _mm512_or_si512(placed(H * m + 2, 2), placed(H * m + 3, 3));
        return _mm512_maskz_ternarylogic_epi32(live, lo, hi, flip_all, 0x56);  // (lo | hi) ^ flip
      };
      const auto next = [&](__m512i q, int64_t m) POCKET_TARGET {  // column m from column m - 1
        __m512i v = _mm512_srli_epi32(q, 8 * H);
        for (int b = 4 - H; b < 3; ++b) v = _mm512_or_si512(v, placed(H * m + b, b));
        return _mm512_maskz_ternarylogic_epi32(live, v, placed(H * m + 3, 3), flip_new, 0x56);
      };
      uint32_t* o = out + i / 16 * gs;
      __m512i q = first(0);
      _mm512_storeu_si512(o, q);
      for (int64_t m = 1; m < cols; ++m) {
        q = next(q, m);
        _mm512_storeu_si512(o + m * out_step, q);
      }
    }
  }
  // conv_q8_requantize_sum per lane: the fp32 traits' (the depthwise store's) on acc - corr.
  POCKET_TARGET static void requantize(Acc acc, const int32_t* corr, const float* mult, const float* bias, float lo,
                                       float hi, int32_t zp, int8_t* out) {
    Avx512F32::requantize(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_loadu_si512(corr))), mult, bias, lo, hi,
                          zp, out);
  }
  // requantize of four vectors of sums that started from start(corr) (no correction left),
  // out[k] getting the first n[k] of vector k's 16 bytes: per vector the float steps, then
  // saturating packs, the zero point added in int16 with saturation, and the lower, then upper
  // clamp on the bytes: the values of conv_q8_requantize_sum, inverted bounds included. Unless
  // in_range, the floats are first clamped to hi (a value past the int32 range, or a NaN,
  // converts to INT_MIN, which saturates low: so a NaN gives lo, as the portable kernel's).
  static constexpr bool kRequantize4 = true;
  template <bool kWhole>
  POCKET_TARGET static void requantize4(const Acc* acc, const float* const* mult, const float* const* bias, float lo,
                                        float hi, int32_t zp, bool in_range, int8_t* const* out, const int* n) {
    const auto scaled = [&](int k) POCKET_TARGET {
      return _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[k]), _mm512_loadu_ps(mult[k])),
                           _mm512_loadu_ps(bias[k]));
    };
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    __m512i q[4];
    if (in_range) {
      for (int k = 0; k < 4; ++k) q[k] = _mm512_cvt_roundps_epi32(scaled(k), kRound);
    } else {
      for (int k = 0; k < 4; ++k) q[k] = _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_set1_ps(hi), scaled(k)), kRound);
    }
    const __m512i z = _mm512_set1_epi16(static_cast<int16_t>(zp));
    __m512i b = _mm512_packs_epi16(_mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), z),
                                   _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), z));
    b = _mm512_max_epi8(b, _mm512_set1_epi8(static_cast<char>(static_cast<int32_t>(lo) + zp)));
    b = _mm512_min_epi8(b, _mm512_set1_epi8(static_cast<char>(static_cast<int32_t>(hi) + zp)));
    // 128-bit lane L holds channels 4L..4L+3 of vectors 0-3: lane k gets vector k's
    b = transpose_lanes(b);
    const __m128i lane[4] = {_mm512_castsi512_si128(b), _mm512_extracti32x4_epi32(b, 1),
                             _mm512_extracti32x4_epi32(b, 2), _mm512_extracti32x4_epi32(b, 3)};
    for (int k = 0; k < 4; ++k) {
      if (kWhole || n[k] == 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out[k]), lane[k]);
      else if (n[k] > 0)
        _mm_mask_storeu_epi8(out[k], static_cast<__mmask16>((1u << n[k]) - 1), lane[k]);
    }
  }
  // float(double(acc - corr) · mult) per lane, as the portable kernel scales the sums.
  POCKET_TARGET static __m512 rescaled(Acc acc, const int32_t* corr, const double* mult) {
    const __m512i a = _mm512_sub_epi32(acc, _mm512_loadu_si512(corr));
    const __m512d a0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(a)), _mm512_loadu_pd(mult));
    const __m512d a1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(a, 1)), _mm512_loadu_pd(mult + 8));
    const __m512d y0 = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(a0)));
    return _mm512_castpd_ps(_mm512_insertf64x4(y0, _mm256_castps_pd(_mm512_cvtpd_ps(a1)), 1));
  }
  POCKET_TARGET static void store(Acc acc, const int32_t* corr, const double* mult, const float* bias, float lo,
                                  float hi, float* out) {
    const __m512 y = _mm512_add_ps(rescaled(acc, corr, mult), _mm512_loadu_ps(bias));
    _mm512_storeu_ps(out, Avx512F32::clamp(y, lo, hi));
  }
  // kStoreRes: the channels-last tile's store with a residual, the first n lanes of y =
  // clamp(rescaled + bias + res, lo, hi) (res read in those lanes only), as store and the
  // tile's residual loop give it; requantize_res stores that y as the int8
  // conv_q8_requantize(y, scale, -128 - zp, 127 - zp, zp) (a true division, as the portable
  // kernel's; the bounds are ordered and finite, so max then min is its clamp).
  static constexpr bool kStoreRes = true;
  POCKET_TARGET static __m512 with_res(Acc acc, const int32_t* corr, const double* mult, const float* bias,
                                       const float* res, float lo, float hi, __mmask16 m) {
    const __m512 y = _mm512_add_ps(rescaled(acc, corr, mult), _mm512_loadu_ps(bias));
    return Avx512F32::clamp(_mm512_add_ps(y, _mm512_maskz_loadu_ps(m, res)), lo, hi);
  }
  POCKET_TARGET static void store_res(Acc acc, const int32_t* corr, const double* mult, const float* bias,
                                      const float* res, float lo, float hi, float* out, int n) {
    _mm512_mask_storeu_ps(out, lanes(n), with_res(acc, corr, mult, bias, res, lo, hi, lanes(n)));
  }
  POCKET_TARGET static void requantize_res(Acc acc, const int32_t* corr, const double* mult, const float* bias,
                                           const float* res, float lo, float hi, float scale, int32_t zp, int8_t* out,
                                           int n) {
    __m512 v = _mm512_div_ps(with_res(acc, corr, mult, bias, res, lo, hi, lanes(n)), _mm512_set1_ps(scale));
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(static_cast<float>(-128 - zp))),
                      _mm512_set1_ps(static_cast<float>(127 - zp)));  // NaN: the lower bound
    const __m512i q = _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                       _mm512_set1_epi32(zp));
    _mm_mask_storeu_epi8(out, lanes(n), _mm512_cvtsepi32_epi8(q));
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

extern const ConvQ8Kernels kConvQ8I8Avx512Vnni = conv_q8_i8_kernels<Vnni, 128, 8, 1, 2, 3>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
