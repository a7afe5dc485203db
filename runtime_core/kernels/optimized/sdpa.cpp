// Driver of pocket::sdpa: parallel over (batch, head) like the portable kernel; each query
// row runs the ISA's SdpaRowFn (vectorized dot products, exponentials and accumulation);
// float16 caches are widened per kv head by the ISA's WidenHalfFn (F16C, NEON fcvtl).
#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

Error sdpa_with(KernelContext& ctx, Value** args, SdpaRowFn row, WidenHalfFn widen) {
  SdpaArgs a;
  Error e = prepare_sdpa(ctx, args, &a);
  if (e != Error::Ok) return e;
  const int64_t heads = a.B * a.Hq, len = a.start + a.T;
  const int64_t slices = slice_count(ctx, heads, a.T * len * a.D * 2);
  float* scores = nullptr;  // per slice (start + T)
  float* kv = nullptr;      // float16 caches: per slice, one kv head widened
  e = temp_array(ctx, "sdpa", "scores", slices * len, &scores);
  if (e == Error::Ok) e = sdpa_kv_scratch(ctx, a, slices, &kv);
  if (e != Error::Ok) return e;
  parallel_slices(ctx, heads, slices, [&](int64_t s, int64_t begin, int64_t end) {
    int64_t widened = -1;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / a.Hq, h = i % a.Hq;
      const float *kh, *vh;  // (S or len, D)
      sdpa_kv_head(a, b, h, widen, kv ? kv + s * 2 * len * a.D : nullptr, &widened, &kh, &vh);
      for (int64_t t = 0; t < a.T; ++t)
        row(a.q + (i * a.T + t) * a.D, kh, vh, a.start + t + 1, a.D, a.scale, scores + s * len,
            a.out + (i * a.T + t) * a.D, t == 0);
    }
  });
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
