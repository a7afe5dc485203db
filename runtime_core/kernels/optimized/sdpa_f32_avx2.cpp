// One query row of pocket::sdpa, AVX2 + FMA (x86-64): q·k dot products 8 floats at a time,
// the exponentials 8 at a time (exp by range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial: under 2 ulp relative error on the softmax's range x <= 0), and the weighted
// sum of V rows accumulated in registers, 32 output floats per pass.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cmath>

#include "ukernels.h"

#define POCKET_TARGET __attribute__((target("avx2,fma")))

namespace pocket {
namespace detail {

namespace {

#include "avx2_helpers.inc"

POCKET_TARGET float dot(const float* a, const float* b, int64_t d) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i < d; i += 8) {
    const __m256i m = tail_mask(d - i < 8 ? d - i : 8);
    acc0 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc0);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

POCKET_TARGET void sdpa_row(const float* q, const float* k, const float* v, int64_t len, int64_t d, float scale,
                            float* scores, float* o, bool fetch_v) {
  float max = -INFINITY;
  for (int64_t j = 0; j < len; ++j) {
    // V row j, read after the scores, is fetched meanwhile on a head's first row: in a decode
    // step the caches come from memory (the weights streamed through the caches since), and
    // two streams in flight measured faster than K's alone (stories110M at position ~160: sdpa
    // 1.0 -> 0.7 ms per token; prefetching K rows ahead as well measured slower). The later
    // rows of a prompt find V in cache (prefetching there cost 17-29%).
    for (int64_t b = 0; fetch_v && b < d; b += 16)
      _mm_prefetch(reinterpret_cast<const char*>(v + j * d + b), _MM_HINT_T0);
    scores[j] = dot(q, k + j * d, d) * scale;
    max = scores[j] > max ? scores[j] : max;
  }
  const __m256 mv = _mm256_set1_ps(max);
  __m256 sum = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(scores + j), mv));
    _mm256_storeu_ps(scores + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (j < len) {
    const __m256i m = tail_mask(len - j);
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(scores + j, m), mv));
    _mm256_maskstore_ps(scores + j, m, e);
    sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_castsi256_ps(m)));
  }
  const float inv = 1.0f / hsum(sum);
  // o = Σ_j scores[j] · v[j], 32 columns of o in registers per pass over V.
  for (int64_t c = 0; c < d; c += 32) {
    const int64_t cols = d - c < 32 ? d - c : 32;
    __m256i mask[4];
    POCKET_UNROLL for (int t = 0; t < 4; ++t) {
      const int64_t left = cols - 8 * t;
      mask[t] = tail_mask(left < 0 ? 0 : left > 8 ? 8 : left);
    }
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    if (cols == 32) {
      for (int64_t t = 0; t < len; ++t) {
        const __m256 wt = _mm256_broadcast_ss(scores + t);
        const float* vr = v + t * d + c;
        POCKET_UNROLL for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vr + 8 * u), acc[u]);
      }
    } else {
      for (int64_t t = 0; t < len; ++t) {
        const __m256 wt = _mm256_broadcast_ss(scores + t);
        const float* vr = v + t * d + c;
        POCKET_UNROLL for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(wt, _mm256_maskload_ps(vr + 8 * u, mask[u]), acc[u]);
      }
    }
    const __m256 iv = _mm256_set1_ps(inv);
    POCKET_UNROLL for (int u = 0; u < 4; ++u) _mm256_maskstore_ps(o + c + 8 * u, mask[u], _mm256_mul_ps(acc[u], iv));
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

extern const SdpaRowFn kSdpaAvx2 = sdpa_row;
extern const WidenHalfFn kWidenHalfAvx2 = widen_half;

}  // namespace detail
}  // namespace pocket

#endif  // __x86_64__
