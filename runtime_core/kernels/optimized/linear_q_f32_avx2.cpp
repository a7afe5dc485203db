// pocket::linear_q with float32 activations (act_mode 0), AVX2 + FMA (x86-64): 16 columns
// of a weight row (8 bytes 4-bit, 16 bytes 8-bit) are widened to int32 and dequantized into
// two vectors. Gemv and dequantize loops: linear_q_f32_tile.inc.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c")))

namespace pocket {
namespace detail {

#include "quant_scales.inc"

namespace {

#include "avx2_helpers.inc"

// The 16 quantized values of columns [col, col + 16) of `row` as int32 in two vectors: for
// 4-bit, the even columns then the odd ones (the 8 bytes widened once, then masked and
// shifted); for 8-bit, in order.
template <int F>
POCKET_TARGET inline void load_q(const uint8_t* row, int64_t col, __m256i* lo, __m256i* hi) {
  if constexpr (qp_bits(F) == 4) {
    const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + col / 2)));
    *lo = _mm256_and_si256(b, _mm256_set1_epi32(0x0F));
    *hi = _mm256_srli_epi32(b, 4);
    if constexpr (F == kQp4Sym) {
      *lo = _mm256_sub_epi32(*lo, _mm256_set1_epi32(8));
      *hi = _mm256_sub_epi32(*hi, _mm256_set1_epi32(8));
    }
  } else {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + col));
    if constexpr (F == kQp8Sym) {
      *lo = _mm256_cvtepi8_epi32(bytes);
      *hi = _mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8));
    } else {
      *lo = _mm256_cvtepu8_epi32(bytes);
      *hi = _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8));
    }
  }
}

template <int F>
POCKET_TARGET inline __m256 dequant(__m256i q, __m256 s, __m256 mn) {
  const __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(q), s);
  if constexpr (qp_asym(F)) return _mm256_add_ps(w, mn);
  return w;
}

struct Avx2 {
  using V = __m256;
  // kChains1 1: with two accumulators per weight row the one-row tile's 8 sums, the rows'
  // scales and mins did not fit the 16 registers, and GCC kept the sums on the stack (a store
  // and a load per sum per step).
  static constexpr int kParts = 2, kCols = 16, kNr2 = 2, kChains1 = 1;
  // Scales factored out for up to 2 rows of x (decode): a step then costs a convert and an FMA
  // per 8 weights instead of a convert, a multiply, an add and an FMA. With more rows the
  // tile's group sums would not fit the registers besides its accumulators.
  static constexpr bool kFactor = true;
  static constexpr int kFactorRows = 2;
  // The column of x that feeds lane i of 16 unpacked nibbles: the even columns, then the odd.
  static constexpr int x_column(int i) { return i < 8 ? 2 * i : 2 * (i - 8) + 1; }
  struct Deq {
    __m256 s, mn;
  };
  POCKET_TARGET static V zero() { return _mm256_setzero_ps(); }
  POCKET_TARGET static V set1(float v) { return _mm256_set1_ps(v); }
  POCKET_TARGET static V load(const float* p) { return _mm256_loadu_ps(p); }
  POCKET_TARGET static V add(V a, V b) { return _mm256_add_ps(a, b); }
  POCKET_TARGET static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  POCKET_TARGET static float sum(V v) { return hsum(v); }
  POCKET_TARGET static void sum4(V a, V b, V c, V d, const float* bias, float* out) {
    Avx2F32::sum4(a, b, c, d, bias, out);
  }
  template <int F>
  POCKET_TARGET static Deq deq(float s, float mn) {
    return {_mm256_set1_ps(s), _mm256_set1_ps(mn)};
  }
  template <int F>
  POCKET_TARGET static void weights(const uint8_t* row, int64_t col, const Deq& d, V* out) {
    __m256i ql, qh;
    load_q<F>(row, col, &ql, &qh);
    out[0] = dequant<F>(ql, d.s, d.mn);
    out[1] = dequant<F>(qh, d.s, d.mn);
  }
  template <int F>
  POCKET_TARGET static void qweights(const uint8_t* row, int64_t col, V* out) {
    __m256i ql, qh;
    load_q<F == kQp4Sym ? kQp4Asym : F>(row, col, &ql, &qh);  // 4-bit: the stored nibbles
    out[0] = _mm256_cvtepi32_ps(ql);
    out[1] = _mm256_cvtepi32_ps(qh);
  }
  template <int F>
  POCKET_TARGET static void store_row(const uint8_t* row, int64_t col, const Deq& d, float* o) {
    V v[2];
    weights<F>(row, col, d, v);
    if constexpr (qp_bits(F) == 4) {  // even/odd columns back into order
      const __m256 a = _mm256_unpacklo_ps(v[0], v[1]), b = _mm256_unpackhi_ps(v[0], v[1]);
      v[0] = _mm256_permute2f128_ps(a, b, 0x20);
      v[1] = _mm256_permute2f128_ps(a, b, 0x31);
    }
    _mm256_storeu_ps(o, v[0]);
    _mm256_storeu_ps(o + 8, v[1]);
  }
};

}  // namespace

#include "linear_q_f32_tile.inc"

extern const LinearQF32Kernels kLinearQF32Avx2 = lq_f32_kernels<Avx2>();

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
