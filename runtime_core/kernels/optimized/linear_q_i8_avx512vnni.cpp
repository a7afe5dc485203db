// pocket::linear_q with int8 activations (act_mode 1 and 2), AVX-512 VNNI (x86-64): VPDPBUSD
// (u8 x s8, 4-way, into int32). Shared helpers and the 256-bit tail tiles:
// linear_q_i8_x86.inc. The full tiles here work on two weight rows at once, one per
// 256-bit half of a 512-bit register: a block of 32 columns of both rows against the same
// 32 activations (broadcast to both halves) is one VPDPBUSD, and the lane sums of 8
// (row of x, weight row) pairs become one vector of 8 doubles with one reduction.
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace pocket {
namespace detail {

constexpr int kBigMr = 4, kBigNr = 4, kRowNr = 8;
constexpr bool kVnni = true;
#include "quant_scales.inc"
#include "linear_q_i8_x86.inc"

namespace {

// Blocks of 32 columns of weight rows a and b: [a | b], each half as load_w makes it.
template <int F>
POCKET_TARGET inline __m512i load_w2(const uint8_t* a, const uint8_t* b, int64_t col) {
  if constexpr (F == kQ4Sym || F == kQ4Asym) {
    const __m256i ra = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + col / 2)));
    const __m256i rb = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + col / 2)));
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(ra), rb, 1);
    const __m512i shift = _mm512_set_epi32(4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0);
    return _mm512_and_si512(_mm512_srlv_epi32(both, shift), _mm512_set1_epi8(0x0F));
  } else {
    const __m256i ra = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + col));
    const __m256i rb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + col));
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(ra), rb, 1);
    if constexpr (F == kQ8Sym) return _mm512_xor_si512(both, _mm512_set1_epi8(static_cast<char>(0x80)));
    return both;
  }
}

// The 8 lane sums of 4 vectors (each two pairs: lanes 0-7 and 8-15), as 8 doubles
// [Σa.lo, Σb.lo, Σc.lo, Σd.lo, Σa.hi, Σb.hi, Σc.hi, Σd.hi] (exact).
POCKET_TARGET inline __m512d reduce8(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
  // 128-bit lane L holds [Σa, Σb, Σc, Σd] over its 4 elements.
  const __m512i abcd = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
  const __m512i sum = _mm512_add_epi32(abcd, _mm512_shuffle_i32x4(abcd, abcd, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m512i halves = _mm512_shuffle_i32x4(sum, sum, _MM_SHUFFLE(2, 0, 2, 0));  // lanes 0 and 2 first
  return _mm512_cvtepi32_pd(_mm512_castsi512_si256(halves));
}

// Register j of a tile (MR rows of x, NR / 2 pairs of weight rows) holds row j % MR with
// weight rows 2·(j / MR) (low half) and 2·(j / MR) + 1 (high half). Octet o (registers
// 4o .. 4o+3, reduced together) has lane l in register 4o + l % 4, weight row of pair
// 2·(register / MR) + l / 4. Lanes of missing registers repeat the last one (zero sums).
template <int MR, int NR>
struct Octets {
  static constexpr int kRegs = MR * NR / 2, kCount = (kRegs + 3) / 4;
  static constexpr int reg(int o, int l) { return 4 * o + l % 4 < kRegs ? 4 * o + l % 4 : kRegs - 1; }
  static constexpr int row(int o, int l) { return reg(o, l) % MR; }
  static constexpr int col(int o, int l) { return 2 * (reg(o, l) / MR) + l / 4; }
};

// Per-weight-row values of w's `values` (scales or mins) at + col · stride in octet o's
// lane order.
template <int MR, int NR>
POCKET_TARGET inline __m512d octet_cols(const QuantWeight& w, const void* values, int64_t at, int64_t stride, int o) {
  using O = Octets<MR, NR>;
  double v[8];  // (a loop, not a lambda: scale_at inlines only into POCKET_TARGET code)
  POCKET_UNROLL for (int l = 0; l < 8; ++l) v[l] = scale_at(w, values, at + O::col(o, l) * stride);
  return _mm512_loadu_pd(v);
}

// Per-row-of-x values v[row · stride] in octet o's lane order.
template <int MR, int NR, typename T>
POCKET_TARGET inline __m512d octet_rows(const T* v, int64_t stride, int o) {
  using O = Octets<MR, NR>;
  if constexpr (MR == 1) {
    return _mm512_set1_pd(static_cast<double>(v[0]));
  } else {
    auto at = [&](int l) { return static_cast<double>(v[O::row(o, l) * stride]); };
    return _mm512_setr_pd(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
  }
}

template <int MR, int NR, int F, int MODE>
POCKET_TARGET void tile512(const LinearQI8Problem& p, int64_t r0, int64_t c) {
  static_assert(NR % 2 == 0, "weight rows in pairs");
  using O = Octets<MR, NR>;
  constexpr bool kAsym = F == kQ4Asym || F == kQ8Asym;
  const int64_t g = p.w.group_size, groups = p.w.groups, k = p.k;
  const double off = offset_of(F == kQ4Sym || F == kQ4Asym ? 4 : 8, !kAsym);
  const bool corrections = kAsym || off != 0;
  __m512d acc[O::kCount], cacc[O::kCount];
  POCKET_UNROLL for (int o = 0; o < O::kCount; ++o) acc[o] = cacc[o] = _mm512_setzero_pd();
  for (int64_t j = 0; j < groups; ++j) {
    __m512d scale[O::kCount];
    POCKET_UNROLL for (int o = 0; o < O::kCount; ++o)
      scale[o] = octet_cols<MR, NR>(p.w, p.w.scales, c * groups + j, groups, o);
    __m512i isum[4 * O::kCount];
    POCKET_UNROLL for (int q = 0; q < 4 * O::kCount; ++q) isum[q] = _mm512_setzero_si512();
    for (int64_t col = j * g; col < (j + 1) * g; col += 32) {
      __m512i w[NR / 2];
      POCKET_UNROLL for (int h = 0; h < NR / 2; ++h) w[h] = load_w2<F>(p.w.row(c + 2 * h), p.w.row(c + 2 * h + 1), col);
      POCKET_UNROLL for (int i = 0; i < MR; ++i) {
        const __m512i x =
            _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.xq + (r0 + i) * k + col)));
        POCKET_UNROLL for (int h = 0; h < NR / 2; ++h) isum[h * MR + i] = _mm512_dpbusd_epi32(isum[h * MR + i], w[h], x);
      }
      if constexpr (MODE == 2) {  // scale per block: s · sx[row, block]
        POCKET_UNROLL for (int o = 0; o < O::kCount; ++o) {
          const __m512d v = reduce8(isum[4 * o], isum[4 * o + 1], isum[4 * o + 2], isum[4 * o + 3]);
          const __m512d sx = octet_rows<MR, NR>(p.sxt + (col / 32) * p.m + r0, 1, o);
          acc[o] = _mm512_fmadd_pd(v, _mm512_mul_pd(scale[o], sx), acc[o]);
        }
        POCKET_UNROLL for (int q = 0; q < O::kRegs; ++q) isum[q] = _mm512_setzero_si512();
      }
    }
    POCKET_UNROLL for (int o = 0; o < O::kCount; ++o) {
      if constexpr (MODE == 1)
        acc[o] = _mm512_fmadd_pd(reduce8(isum[4 * o], isum[4 * o + 1], isum[4 * o + 2], isum[4 * o + 3]), scale[o],
                                 acc[o]);
      if (corrections) {
        const __m512d mins = kAsym ? octet_cols<MR, NR>(p.w, p.w.mins, c * groups + j, groups, o) : _mm512_setzero_pd();
        const __m512d corr = _mm512_fnmadd_pd(_mm512_set1_pd(off), scale[o], mins);
        cacc[o] = _mm512_fmadd_pd(corr, octet_rows<MR, NR>(p.xst + j * p.m + r0, 1, o), cacc[o]);
      }
    }
  }
  alignas(64) double total[8 * O::kCount];
  POCKET_UNROLL for (int o = 0; o < O::kCount; ++o) _mm512_store_pd(total + 8 * o, _mm512_add_pd(acc[o], cacc[o]));
  for (int o = 0; o < O::kCount; ++o)
    for (int l = 0; l < 8; ++l) {
      if (4 * o + l % 4 >= O::kRegs) continue;
      const int64_t row = r0 + O::row(o, l), col = c + O::col(o, l);
      double v = total[8 * o + l];
      if (MODE == 1) v *= p.sx[row];
      float out = static_cast<float>(v);
      if (p.bias != nullptr) out += p.bias[col];
      p.y[row * p.n + col] = out;
    }
}

}  // namespace

#define POCKET_I8_BIG_TILE(MR, NR, F, MODE) tile512<MR, NR, F, MODE>
#define POCKET_I8_ROW_TILE(NR, F, MODE) tile512<1, NR, F, MODE>
#include "linear_q_i8_x86_run.inc"

extern const LinearQI8Kernels kLinearQI8Avx512Vnni = {run, offset_of, &kLinearQPI8Avx512Vnni};

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
