// Depthwise 3x3 convolution of one channel, float32, AVX2 + FMA (x86-64): 8 output columns
// per vector where all three taps of a row lie inside the input; stride 2 de-interleaves two
// loaded vectors into even and odd columns. Borders (padding) are computed one column at a
// time with bounds checks.
#if defined(__x86_64__)

#include <immintrin.h>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

// Even and odd floats of p[0, 16).
POCKET_TARGET inline void deinterleave(const float* p, __m256* even, __m256* odd) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

// 8 outputs at x columns ix, ix + S, ...: rows r[0 .. 3) (all inside the input when kAll,
// else null rows are skipped).
template <int S, bool kAll>
POCKET_TARGET inline __m256 eight(const float* const r[3], int64_t ix, const __m256 wv[9], __m256 acc) {
  POCKET_UNROLL for (int kh = 0; kh < 3; ++kh) {
    if (!kAll && r[kh] == nullptr) continue;
    const float* p = r[kh] + ix;
    if constexpr (S == 1) {
      acc = _mm256_fmadd_ps(wv[kh * 3], _mm256_loadu_ps(p), acc);
      acc = _mm256_fmadd_ps(wv[kh * 3 + 1], _mm256_loadu_ps(p + 1), acc);
      acc = _mm256_fmadd_ps(wv[kh * 3 + 2], _mm256_loadu_ps(p + 2), acc);
    } else {
      __m256 e0, o0, e2, o2;
      deinterleave(p, &e0, &o0);
      deinterleave(p + 2, &e2, &o2);
      acc = _mm256_fmadd_ps(wv[kh * 3], e0, acc);
      acc = _mm256_fmadd_ps(wv[kh * 3 + 1], o0, acc);
      acc = _mm256_fmadd_ps(wv[kh * 3 + 2], e2, acc);
    }
  }
  return acc;
}

template <int S>
POCKET_TARGET void dwconv3x3_s(const float* x, int64_t ih, int64_t iw, const float* w, float bias, int64_t pad_h,
                               int64_t pad_w, float* y, int64_t oh, int64_t ow) {
  __m256 wv[9];
  POCKET_UNROLL for (int i = 0; i < 9; ++i) wv[i] = _mm256_set1_ps(w[i]);
  const __m256 bv = _mm256_set1_ps(bias);
  // Vector columns [lo, hi): every float the loads touch lies inside the row (stride 2
  // loads one float past the last tap).
  const int64_t lo = (pad_w + S - 1) / S;
  const int64_t last = iw - (S == 1 ? 3 : 4) + pad_w;  // ox * S <= last
  int64_t hi = last < 0 ? 0 : last / S + 1;
  hi = hi > ow ? ow : hi;
  for (int64_t oy = 0; oy < oh; ++oy) {
    const float* rows[3];
    bool all = true;
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t iy = oy * S - pad_h + kh;
      rows[kh] = iy >= 0 && iy < ih ? x + iy * iw : nullptr;
      all = all && rows[kh] != nullptr;
    }
    float* yr = y + oy * ow;
    int64_t ox = 0;
    for (; ox < lo && ox < ow; ++ox) yr[ox] = dwconv3x3_column(rows, w, bias, ox * S - pad_w, iw);
    if (all)
      for (; ox + 8 <= hi; ox += 8) _mm256_storeu_ps(yr + ox, eight<S, true>(rows, ox * S - pad_w, wv, bv));
    else
      for (; ox + 8 <= hi; ox += 8) _mm256_storeu_ps(yr + ox, eight<S, false>(rows, ox * S - pad_w, wv, bv));
    for (; ox < ow; ++ox) yr[ox] = dwconv3x3_column(rows, w, bias, ox * S - pad_w, iw);
  }
}

void dwconv3x3(const float* x, int64_t ih, int64_t iw, const float* w, float bias, int64_t stride, int64_t pad_h,
               int64_t pad_w, float* y, int64_t oh, int64_t ow) {
  if (stride == 1)
    dwconv3x3_s<1>(x, ih, iw, w, bias, pad_h, pad_w, y, oh, ow);
  else
    dwconv3x3_s<2>(x, ih, iw, w, bias, pad_h, pad_w, y, oh, ow);
}

}  // namespace

extern const DwConv3x3Fn kDwConv3x3Avx2 = dwconv3x3;

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
