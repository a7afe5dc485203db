// pocket::linear_q_packed microkernels, AVX2 (x86-64): a block of 16 channels is two
// vectors; VPMADDUBSW multiplies unsigned weight operands by broadcast signed activation bytes
// into int16 pairs, VPMADDWD adds the pairs into int32. 4-bit: the nibbles (pairs at most
// 2·15·127; the two halves added in int16). 8-bit: the sign trick, |q| times x with q's sign
// (pairs at most 2·128·127; each half widened on its own), asymmetric bytes shifted by -128
// first. Tile and block loop: linear_qp_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c")))

namespace pocket {
namespace detail {

namespace {

struct Avx2 {
  using Acc = __m256i;
  using W = __m256i;
  using B = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8, kMr = 2;
  POCKET_TARGET static Acc zero() { return _mm256_setzero_si256(); }
  POCKET_TARGET static F fzero() { return _mm256_setzero_ps(); }
  template <int Fmt>
  POCKET_TARGET static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    if constexpr (qp_bits(Fmt) == 4) {
      const __m256i mask = _mm256_set1_epi8(0x0F);
      *wa = _mm256_and_si256(va, mask);
      *wb = _mm256_and_si256(_mm256_srli_epi16(va, 4), mask);
    } else {
      const __m256i flip = _mm256_set1_epi8(qp_asym(Fmt) ? static_cast<char>(0x80) : 0);
      *wa = _mm256_xor_si256(va, flip);
      *wb = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)), flip);
    }
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? -128 : 0);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm256_set1_epi32(q);
  }
  template <int Fmt>
  POCKET_TARGET static Acc dot2(Acc acc, W wa, B xa, W wb, B xb) {
    const __m256i ones = _mm256_set1_epi16(1);
    if constexpr (qp_bits(Fmt) == 4) {
      const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(wa, xa), _mm256_maddubs_epi16(wb, xb));
      return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
    } else {
      const __m256i pa = _mm256_maddubs_epi16(_mm256_abs_epi8(wa), _mm256_sign_epi8(xa, wa));
      const __m256i pb = _mm256_maddubs_epi16(_mm256_abs_epi8(wb), _mm256_sign_epi8(xb, wb));
      return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(pa, ones), _mm256_madd_epi16(pb, ones)));
    }
  }
  POCKET_TARGET static F fload(const float* p) { return _mm256_loadu_ps(p); }
  POCKET_TARGET static F hload(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  POCKET_TARGET static F fset(float v) { return _mm256_set1_ps(v); }
  POCKET_TARGET static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  POCKET_TARGET static F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
  POCKET_TARGET static void fstore(float* p, F v) { _mm256_storeu_ps(p, v); }
  POCKET_TARGET static F cvt(Acc acc, int32_t sub) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(acc, _mm256_set1_epi32(sub)));
  }
};

// LinearQPKernels::quantize_row, 8 values at a time (scale_cols is a multiple of 8): as the
// AVX-512 one (linear_qp_i8_avx512vnni.cpp), the int8 values by two saturating packs.
POCKET_TARGET void quantize_row(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                int32_t* xs) {
  const __m256 sign = _mm256_set1_ps(-0.0f), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  for (int64_t b = 0; b < k; b += scale_cols) {
    __m256 amax = _mm256_setzero_ps();
    for (int64_t i = b; i < b + scale_cols; i += 8)
      amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), amax);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    const float scale = _mm_cvtss_f32(m) / 127.0f;
    const __m256 inv = _mm256_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    sx[b / scale_cols] = scale;
    for (int64_t i = b; i < b + scale_cols; i += 8) {
      const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), inv), lo), hi);
      const __m256i q = _mm256_cvtps_epi32(v);
      const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(xq + i), _mm_packs_epi16(words, words));
    }
  }
  for (int64_t s = 0; s < k; s += span) {
    int32_t sum = 0;
    for (int64_t i = s; i < s + span; ++i) sum += xq[i];
    xs[s / span] = sum;
  }
}

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8Avx2 = {linear_qp_run<Avx2>, quantize_row};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
