// pocket::linear_q_packed microkernels, AVX-512 VNNI (x86-64): a block of 16 channels is one
// vector; VPDPBUSD multiplies unsigned weight operands (nibbles; bytes, symmetric ones + 128)
// by 4 broadcast signed activation bytes per lane. Tile and block loop: linear_qp_tile.inc.
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

struct Vnni {
  using Acc = __m512i;
  using W = __m512i;
  using B = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16, kMr = 4;
  POCKET_TARGET static Acc zero() { return _mm512_setzero_si512(); }
  POCKET_TARGET static F fzero() { return _mm512_setzero_ps(); }
  template <int Fmt>
  POCKET_TARGET static void weights(const uint8_t* a, const uint8_t* b, W* wa, W* wb) {
    const __m512i va = _mm512_loadu_si512(a);
    if constexpr (qp_bits(Fmt) == 4) {
      const __m512i mask = _mm512_set1_epi8(0x0F);
      *wa = _mm512_and_si512(va, mask);
      *wb = _mm512_and_si512(_mm512_srli_epi16(va, 4), mask);
    } else {
      const __m512i flip = _mm512_set1_epi8(qp_asym(Fmt) ? 0 : static_cast<char>(0x80));
      *wa = _mm512_xor_si512(va, flip);
      *wb = _mm512_xor_si512(_mm512_loadu_si512(b), flip);
    }
  }
  template <int Fmt>
  static constexpr int32_t offset() {
    return qp_bits(Fmt) == 4 ? (qp_asym(Fmt) ? 0 : 8) : (qp_asym(Fmt) ? 0 : 128);
  }
  POCKET_TARGET static B bcast(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, 4);
    return _mm512_set1_epi32(q);
  }
  template <int Fmt>
  POCKET_TARGET static Acc dot2(Acc acc, W lo, B xa, W hi, B xb) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc, lo, xa), hi, xb);
  }
  POCKET_TARGET static F fload(const float* p) { return _mm512_loadu_ps(p); }
  POCKET_TARGET static F hload(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  POCKET_TARGET static F fset(float v) { return _mm512_set1_ps(v); }
  POCKET_TARGET static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  POCKET_TARGET static F fmul(F a, F b) { return _mm512_mul_ps(a, b); }
  POCKET_TARGET static void fstore(float* p, F v) { _mm512_storeu_ps(p, v); }
  POCKET_TARGET static F cvt(Acc acc, int32_t sub) {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_set1_epi32(sub)));
  }
};

// LinearQPKernels::quantize_row, 16 values at a time (masked past the end): per block of
// scale_cols values amax|x| by VMAXPS (a NaN loses, as in the scalar loop), the same scale and
// inverse, then x · inv clamped (a NaN gives -127) and rounded to nearest even by the
// conversion; the sums per span from the stored bytes.
POCKET_TARGET void quantize_row(const float* x, int64_t k, int64_t scale_cols, int64_t span, int8_t* xq, float* sx,
                                int32_t* xs) {
  const auto mask = [](int64_t left) POCKET_TARGET {
    return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
  };
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (int64_t b = 0; b < k; b += scale_cols) {
    __m512 amax = _mm512_setzero_ps();
    for (int64_t i = b; i < b + scale_cols; i += 16)
      amax = _mm512_max_ps(_mm512_abs_ps(_mm512_maskz_loadu_ps(mask(b + scale_cols - i), x + i)), amax);
    const float scale = _mm512_reduce_max_ps(amax) / 127.0f;
    const __m512 inv = _mm512_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    sx[b / scale_cols] = scale;
    for (int64_t i = b; i < b + scale_cols; i += 16) {
      const __mmask16 m = mask(b + scale_cols - i);
      const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv), lo), hi);
      _mm512_mask_cvtsepi32_storeu_epi8(xq + i, m, _mm512_cvtps_epi32(v));
    }
  }
  for (int64_t s = 0; s < k; s += span) {
    __m512i sum = _mm512_setzero_si512();
    for (int64_t i = s; i < s + span; i += 16)
      sum = _mm512_add_epi32(sum, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask(s + span - i), xq + i)));
    xs[s / span] = _mm512_reduce_add_epi32(sum);
  }
}

}  // namespace

#include "linear_qp_tile.inc"

extern const LinearQPKernels kLinearQPI8Avx512Vnni = {linear_qp_run<Vnni>, quantize_row};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
