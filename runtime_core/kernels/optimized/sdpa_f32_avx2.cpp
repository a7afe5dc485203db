// Query rows of pocket::sdpa, AVX2 + FMA (x86-64): q·k dot products 8 floats at a time, the
// exponentials 8 at a time (exp by range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial: under 2 ulp relative error on the softmax's range x <= 0), and the weighted
// sum of V rows accumulated in registers, 32 or 16 output floats per row and pass. Up to
// kSdpaGroup query heads that share a kv head run together, reading K and V once.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

// N query rows (heads that share one kv head: grouped-query attention) against the same K and
// V: each K and V row is loaded once for all of them. Every row gets exactly the operations of
// a single row (the same dot products, exponentials and sums, in the same order).
template <int N>
POCKET_TARGET void sdpa_rows_n(const float* q, int64_t q_stride, const float* k, const float* v, int64_t len,
                               int64_t d, float scale, float* scores, float* o, int64_t o_stride, bool fetch_v) {
  float max[N];
  POCKET_UNROLL for (int r = 0; r < N; ++r) max[r] = -INFINITY;
  for (int64_t j = 0; j < len; ++j) {
    // V row j, read after the scores, is fetched meanwhile on a head's first row: in a decode
    // step the caches come from memory (the weights streamed through the caches since), and
    // two streams in flight measured faster than K's alone (stories110M at position ~160: sdpa
    // 1.0 -> 0.7 ms per token; prefetching K rows ahead as well measured slower). The later
    // rows of a prompt find V in cache (prefetching there cost 17-29%).
    for (int64_t b = 0; fetch_v && b < d; b += 16)
      _mm_prefetch(reinterpret_cast<const char*>(v + j * d + b), _MM_HINT_T0);
    const float* kr = k + j * d;
    __m256 acc0[N], acc1[N];
    POCKET_UNROLL for (int r = 0; r < N; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) {
      const __m256 k0 = _mm256_loadu_ps(kr + i), k1 = _mm256_loadu_ps(kr + i + 8);
      POCKET_UNROLL for (int r = 0; r < N; ++r) {
        acc0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * q_stride + i), k0, acc0[r]);
        acc1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * q_stride + i + 8), k1, acc1[r]);
      }
    }
    for (; i < d; i += 8) {
      const __m256i m = tail_mask(d - i < 8 ? d - i : 8);
      const __m256 k0 = _mm256_maskload_ps(kr + i, m);
      POCKET_UNROLL for (int r = 0; r < N; ++r)
        acc0[r] = _mm256_fmadd_ps(_mm256_maskload_ps(q + r * q_stride + i, m), k0, acc0[r]);
    }
    POCKET_UNROLL for (int r = 0; r < N; ++r) {
      const float sc = hsum(_mm256_add_ps(acc0[r], acc1[r])) * scale;
      scores[r * len + j] = sc;
      max[r] = sc > max[r] ? sc : max[r];
    }
  }
  float inv[N];
  POCKET_UNROLL for (int r = 0; r < N; ++r) {
    float* sr = scores + r * len;
    const __m256 mv = _mm256_set1_ps(max[r]);
    __m256 sum = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(sr + j), mv));
      _mm256_storeu_ps(sr + j, e);
      sum = _mm256_add_ps(sum, e);
    }
    if (j < len) {
      const __m256i m = tail_mask(len - j);
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(sr + j, m), mv));
      _mm256_maskstore_ps(sr + j, m, e);
      sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_castsi256_ps(m)));
    }
    inv[r] = 1.0f / hsum(sum);
  }
  // o = Σ_j scores[j] · v[j]: U vectors of o per row in registers per pass over V (32 columns
  // for up to 2 rows, 16 for more).
  constexpr int U = N <= 2 ? 4 : 2;
  for (int64_t c = 0; c < d; c += 8 * U) {
    const int64_t cols = d - c < 8 * U ? d - c : 8 * U;
    __m256i mask[U];
    POCKET_UNROLL for (int u = 0; u < U; ++u) {
      const int64_t left = cols - 8 * u;
      mask[u] = tail_mask(left < 0 ? 0 : left > 8 ? 8 : left);
    }
    __m256 acc[N][U];
    POCKET_UNROLL for (int r = 0; r < N; ++r) POCKET_UNROLL for (int u = 0; u < U; ++u) acc[r][u] = _mm256_setzero_ps();
    const bool whole = cols == 8 * U;
    for (int64_t t = 0; t < len; ++t) {
      const float* vr = v + t * d + c;
      __m256 vv[U];
      POCKET_UNROLL for (int u = 0; u < U; ++u)
        vv[u] = whole ? _mm256_loadu_ps(vr + 8 * u) : _mm256_maskload_ps(vr + 8 * u, mask[u]);
      POCKET_UNROLL for (int r = 0; r < N; ++r) {
        const __m256 wt = _mm256_broadcast_ss(scores + r * len + t);
        POCKET_UNROLL for (int u = 0; u < U; ++u) acc[r][u] = _mm256_fmadd_ps(wt, vv[u], acc[r][u]);
      }
    }
    POCKET_UNROLL for (int r = 0; r < N; ++r) {
      const __m256 iv = _mm256_set1_ps(inv[r]);
      POCKET_UNROLL for (int u = 0; u < U; ++u)
        _mm256_maskstore_ps(o + r * o_stride + c + 8 * u, mask[u], _mm256_mul_ps(acc[r][u], iv));
    }
  }
}

POCKET_TARGET void sdpa_rows(const float* q, int64_t q_stride, int n, const float* k, const float* v, int64_t len,
                             int64_t d, float scale, float* scores, float* o, int64_t o_stride, bool fetch_v) {
  switch (n) {
    case 1: return sdpa_rows_n<1>(q, q_stride, k, v, len, d, scale, scores, o, o_stride, fetch_v);
    case 2: return sdpa_rows_n<2>(q, q_stride, k, v, len, d, scale, scores, o, o_stride, fetch_v);
    case 3: return sdpa_rows_n<3>(q, q_stride, k, v, len, d, scale, scores, o, o_stride, fetch_v);
    default: return sdpa_rows_n<4>(q, q_stride, k, v, len, d, scale, scores, o, o_stride, fetch_v);
  }
}

// float16 -> float32 with F16C (exact, as half_to_float).
__attribute__((target("avx2,f16c"))) void widen_half(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  if (i < n) {
    uint16_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float out[8];
    for (int64_t j = i; j < n; ++j) tail[j - i] = src[j];
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tail))));
    for (int64_t j = i; j < n; ++j) dst[j] = out[j - i];
  }
}

}  // namespace

extern const SdpaRowsFn kSdpaAvx2 = sdpa_rows;
extern const WidenHalfFn kWidenHalfAvx2 = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
