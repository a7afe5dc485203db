// Driver of pocket::sdpa: parallel over (batch, head) like the portable kernel; the query heads
// of a slice that share a kv head (grouped-query attention), up to kSdpaGroup, run the ISA's
// SdpaRowsFn together, one query row each (vectorized dot products, exponentials and
// accumulation, K and V read once); float16 caches run its SdpaRowsHalfFn, which widens K and
// V as it loads them (F16C, NEON fcvtl): half the bytes read, no widened copy.
#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

Error sdpa_with(KernelContext& ctx, Value** args, SdpaRowsFn rows, SdpaRowsHalfFn rows_half) {
  SdpaArgs a;
  Error e = prepare_sdpa(ctx, args, &a);
  if (e != Error::Ok) return e;
  const int64_t heads = a.B * a.Hq, len = a.start + a.T, group = a.Hq / a.Hkv;
  const int64_t slices = slice_count(ctx, heads, a.T * len * a.D * 2);
  float* scores = nullptr;  // per slice (kSdpaGroup, start + T)
  e = temp_array(ctx, "sdpa", "scores", slices * kSdpaGroup * len, &scores);
  if (e != Error::Ok) return e;
  parallel_slices(ctx, heads, slices, [&](int64_t s, int64_t begin, int64_t end) {
    for (int64_t i = begin, n = 1; i < end; i += n) {
      const int64_t b = i / a.Hq, h = i % a.Hq;
      n = 1;  // heads h .. h + n - 1: this slice's, of h's kv head
      while (n < kSdpaGroup && i + n < end && h + n < a.Hq && (h + n) / group == h / group) ++n;
      const int64_t kv = (b * a.Hkv + h / group) * a.S * a.D;  // the kv head's first row
      // The T query rows of heads i .. i + n - 1 over K and V (float or float16 rows).
      auto attend = [&](auto fn, const auto* k, const auto* v) {
        for (int64_t t = 0; t < a.T; ++t)
          fn(a.q + (i * a.T + t) * a.D, a.T * a.D, static_cast<int>(n), k, v, a.start + t + 1, a.D, a.scale,
             scores + s * kSdpaGroup * len, a.out + (i * a.T + t) * a.D, a.T * a.D, t == 0);
      };
      if (a.k16 != nullptr) attend(rows_half, a.k16 + kv, a.v16 + kv);
      else attend(rows, a.k + kv, a.v + kv);
    }
  });
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
