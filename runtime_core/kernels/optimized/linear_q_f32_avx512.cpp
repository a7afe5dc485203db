// pocket::linear_q with float32 activations (act_mode 0), AVX-512 F (x86-64): 32 columns of
// a weight row per step. 4-bit weights are looked up (VPERMPS) in a table of the group's 16
// dequantized values, built once per group and row: the reference's float32 weights at one
// permute each, where converting and scaling took four operations. Gemv and dequantize loops:
// linear_q_f32_tile.inc.
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

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))

namespace pocket {
namespace detail {

#include "quant_scales.inc"

namespace {

#include "avx512_helpers.inc"

// 16 8-bit values from p dequantized: q * s, then + mn when asymmetric.
template <int F>
POCKET_TARGET inline __m512 dequant8(const uint8_t* p, __m512 s, __m512 mn) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m512i q = F == kQp8Asym ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b);
  const __m512 w = _mm512_mul_ps(_mm512_cvtepi32_ps(q), s);
  if constexpr (qp_asym(F)) return _mm512_add_ps(w, mn);
  return w;
}

// 16 4-bit values, one per byte of `nibbles` (its low 4 bits), looked up in a group's table of
// 16: VPERMPS reads only the low 4 bits of each index lane, so no mask is needed.
POCKET_TARGET inline __m512 lookup(__m128i nibbles, __m512 table) {
  return _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(nibbles), table);
}

// The 16 4-bit values of 8 bytes looked up in `table`, lane i from column x_column(i): the 8
// bytes broadcast (a load, no shuffle), each lane shifted to its nibble, one permute.
POCKET_TARGET inline __m512 lookup16(const uint8_t* p, __m512 table) {
  int64_t v;
  std::memcpy(&v, p, 8);
  const __m512i shifts = _mm512_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28);
  return _mm512_permutexvar_ps(_mm512_srlv_epi32(_mm512_set1_epi64(v), shifts), table);
}

struct Avx512 {
  using V = __m512;
  static constexpr int kParts = 1, kCols = 32, kNr2 = 4, kChains1 = 2;
  static constexpr bool kFactor = false;
  // The column of x that feeds lane i of 16 unpacked nibbles (lookup16).
  static constexpr int x_column(int i) { return 8 * (i % 2) + i / 2; }
  // 4-bit: a = the group's 16 dequantized values by nibble (q * s, + mn); 8-bit: a = s, b = mn.
  struct Deq {
    __m512 a, b;
  };
  POCKET_TARGET static V zero() { return _mm512_setzero_ps(); }
  POCKET_TARGET static V load(const float* p) { return _mm512_loadu_ps(p); }
  POCKET_TARGET static V add(V a, V b) { return _mm512_add_ps(a, b); }
  POCKET_TARGET static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  POCKET_TARGET static float sum(V v) {
    const __m256 h =
        _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  POCKET_TARGET static void sum4(V a, V b, V c, V d, const float* bias, float* out) {
    Avx512F32::sum4(a, b, c, d, bias, out);
  }
  template <int F>
  POCKET_TARGET static Deq deq(float s, float mn) {
    const __m512 vs = _mm512_set1_ps(s), vm = _mm512_set1_ps(mn);
    if constexpr (qp_bits(F) == 4) {
      const __m512 q = F == kQp4Sym ? _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7)
                                    : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
      const __m512 t = _mm512_mul_ps(q, vs);
      return {qp_asym(F) ? _mm512_add_ps(t, vm) : t, vm};
    }
    return {vs, vm};
  }
  // 32 columns: two runs of 16, each in x_column order for 4-bit weights, in order for 8-bit.
  template <int F>
  POCKET_TARGET static void weights(const uint8_t* row, int64_t col, const Deq& d, V* out) {
    if constexpr (qp_bits(F) == 4) {
      out[0] = lookup16(row + col / 2, d.a);
      out[1] = lookup16(row + col / 2 + 8, d.a);
    } else {
      out[0] = dequant8<F>(row + col, d.a, d.b);
      out[1] = dequant8<F>(row + col + 16, d.a, d.b);
    }
  }
  template <int F>
  POCKET_TARGET static void weights16(const uint8_t* row, int64_t col, const Deq& d, V* out) {
    if constexpr (qp_bits(F) == 4) {
      out[0] = lookup16(row + col / 2, d.a);
    } else {
      out[0] = dequant8<F>(row + col, d.a, d.b);
    }
  }
  template <int F>
  POCKET_TARGET static void store_row(const uint8_t* row, int64_t col, const Deq& d, float* o) {
    if constexpr (qp_bits(F) == 4) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + col / 2));
      _mm512_storeu_ps(o, lookup(_mm_unpacklo_epi8(b, _mm_srli_epi16(b, 4)), d.a));
    } else {
      _mm512_storeu_ps(o, dequant8<F>(row + col, d.a, d.b));
    }
  }
};

}  // namespace

#include "linear_q_f32_tile.inc"

extern const LinearQF32Kernels kLinearQF32Avx512 = lq_f32_kernels<Avx512>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
