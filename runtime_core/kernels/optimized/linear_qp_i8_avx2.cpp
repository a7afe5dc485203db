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

#include "avx2_helpers.inc"

struct Avx2 : Avx2Qp<Avx2> {
  static constexpr int kMr = 4;
  template <int Fmt>  // asymmetric bytes shifted by -128 (xor 0x80)
  static constexpr bool flip() {
    return qp_asym(Fmt);
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? -128 : 0);
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
};

// quantize_row's operations (qp_quantize_row in linear_qp_tile.inc), 8 values at a time
// (scale_cols and span are multiples of 8): as the AVX-512 ones, the int8 values by two
// saturating packs.
struct Avx2Row {
  using M = __m256;
  using S = __m256i;
  static constexpr int64_t kQ = 8;
  POCKET_TARGET static M mzero() { return _mm256_setzero_ps(); }
  POCKET_TARGET static M amax(M m, const float* x, int64_t) {
    return _mm256_max_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x)), m);
  }
  POCKET_TARGET static float max_of(M m) { return hmax(m); }
  POCKET_TARGET static void quantize(const float* x, int64_t, float inv, int8_t* out) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x), _mm256_set1_ps(inv));
    const __m256i q =
        _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packs_epi16(words, words));
  }
  POCKET_TARGET static S szero() { return _mm256_setzero_si256(); }
  POCKET_TARGET static S sum(S t, const int8_t* q, int64_t) {
    return _mm256_add_epi32(t, _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
  }
  POCKET_TARGET static int32_t sum_of(S t) {
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    return _mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 1)));
  }
};

}  // namespace

#include "linear_qp_tile.inc"

void linear_qp_quantize_row_avx2(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                 int32_t* xs) {
  qp_quantize_row<Avx2Row>(x, k, scale_cols, span, xq, sx, xs);
}

extern const LinearQPKernels kLinearQPI8Avx2 = {linear_qp_run<Avx2>, linear_qp_quantize_row_avx2};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
