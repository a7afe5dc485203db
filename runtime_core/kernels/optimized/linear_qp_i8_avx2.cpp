// pocket::linear_q_packed microkernels, AVX2 (x86-64): a block of 16 channels is two
// vectors; VPMADDUBSW multiplies the unsigned nibbles by broadcast signed activation bytes
// into int16 pairs (at most 2·15·128 each, the low and high nibble halves added: no
// saturation), VPMADDWD adds the pairs into int32. Tile and block loop: linear_qp_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstring>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

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
  POCKET_TARGET static void nibbles(const uint8_t* p, W* lo, W* hi) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), mask = _mm256_set1_epi8(0x0F);
    *lo = _mm256_and_si256(b, mask);
    *hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), mask);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm256_set1_epi32(q);
  }
  POCKET_TARGET static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) {
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xa), _mm256_maddubs_epi16(hi, xb));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  POCKET_TARGET static F fload(const float* p) { return _mm256_loadu_ps(p); }
  POCKET_TARGET static F fset(float v) { return _mm256_set1_ps(v); }
  POCKET_TARGET static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  POCKET_TARGET static F fmul(F a, F b) { return _mm256_mul_ps(a, b); }
  POCKET_TARGET static void fstore(float* p, F v) { _mm256_storeu_ps(p, v); }
  POCKET_TARGET static F cvt(Acc acc, int32_t sub) {
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(acc, _mm256_set1_epi32(sub)));
  }
};

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8Avx2 = {linear_qp_run<Avx2>};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
