// pocket::linear_q with float32 activations (act_mode 0), AVX-512 F (x86-64): 16 columns of
// a weight row (4-bit: 8 bytes, low nibbles then high nibbles, matching the permuted x)
// dequantized into one vector. Gemv and dequantize loops: linear_q_f32_tile.inc.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

#include "quant_scales.inc"

namespace {

// The 16 quantized values of columns [col, col + 16) of `row` as int8: 4-bit in natural
// column order when `kInterleaved`, else the even columns then the odd ones.
template <int F, bool kInterleaved>
POCKET_TARGET inline __m128i load_q8(const uint8_t* row, int64_t col) {
  if constexpr (qp_bits(F) == 4) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + col / 2));
    const __m128i nib = _mm_set1_epi8(0x0F);
    const __m128i l = _mm_and_si128(bytes, nib), h = _mm_and_si128(_mm_srli_epi16(bytes, 4), nib);
    __m128i q = kInterleaved ? _mm_unpacklo_epi8(l, h) : _mm_unpacklo_epi64(l, h);
    if constexpr (F == kQp4Sym) q = _mm_sub_epi8(q, _mm_set1_epi8(8));
    return q;
  } else {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + col));
  }
}

template <int F>
POCKET_TARGET inline __m512 dequant(__m128i q8, __m512 s, __m512 mn) {
  const __m512i q = F == kQp8Asym ? _mm512_cvtepu8_epi32(q8) : _mm512_cvtepi8_epi32(q8);
  const __m512 w = _mm512_mul_ps(_mm512_cvtepi32_ps(q), s);
  if constexpr (qp_asym(F)) return _mm512_add_ps(w, mn);
  return w;
}

struct Avx512 {
  using V = __m512;
  static constexpr int kParts = 1, kNr2 = 4;
  POCKET_TARGET static V zero() { return _mm512_setzero_ps(); }
  POCKET_TARGET static V set1(float v) { return _mm512_set1_ps(v); }
  POCKET_TARGET static V load(const float* p) { return _mm512_loadu_ps(p); }
  POCKET_TARGET static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  POCKET_TARGET static float sum(V v) {
    const __m256 h =
        _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  template <int F>
  POCKET_TARGET static void weights(const uint8_t* row, int64_t col, V s, V mn, V* out) {
    out[0] = dequant<F>(load_q8<F, false>(row, col), s, mn);
  }
  template <int F>
  POCKET_TARGET static void store_row(const uint8_t* row, int64_t col, V s, V mn, float* o) {
    _mm512_storeu_ps(o, dequant<F>(load_q8<F, true>(row, col), s, mn));
  }
};

}  // namespace

#include "linear_q_f32_tile.inc"

extern const LinearQF32Kernels kLinearQF32Avx512 = lq_f32_kernels<Avx512>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
