// pocket::sdpa(Tensor q, Tensor k_cache, Tensor v_cache, Tensor start_pos, float scale) -> Tensor
//
// Causal attention of q [B, Hq, T, D] at positions start_pos .. start_pos+T-1 over the first
// start_pos+T positions of k_cache/v_cache [B, Hkv, S, D]; query head h reads kv head
// h / (Hq / Hkv) (grouped-query attention). float32.
#include <cmath>

#include "llm_util.h"

namespace pocket {

Error op_sdpa(KernelContext& ctx, Value** args) {
  const Tensor& q = args[0]->tensor;
  const Tensor& k = args[1]->tensor;
  const Tensor& v = args[2]->tensor;
  const float scale = static_cast<float>(args[4]->d);
  Tensor& out = args[5]->tensor;
  if (q.dim != 4 || k.dim != 4 || v.dim != 4)
    return ctx.fail(Error::InvalidArgument, "sdpa: q, k_cache and v_cache must be 4-d");
  for (const Tensor* t : {&q, &k, &v, static_cast<const Tensor*>(&out)}) {
    Error e = detail::expect_dtype(ctx, "sdpa", "tensor", *t, ScalarType::Float32);
    if (e != Error::Ok) return e;
    if (t != &out && !t->is_contiguous()) return ctx.fail(Error::InvalidArgument, "sdpa: inputs must be contiguous");
  }
  const int64_t B = q.sizes[0], Hq = q.sizes[1], T = q.sizes[2], D = q.sizes[3];
  const int64_t Hkv = k.sizes[1], S = k.sizes[2];
  if (k.sizes[0] != B || v.sizes[0] != B || k.sizes[3] != D || v.sizes[3] != D || v.sizes[1] != Hkv ||
      v.sizes[2] != S || Hkv == 0 || Hq % Hkv != 0)
    return ctx.fail(Error::InvalidArgument, "sdpa: q [%lld, %lld, %lld, %lld] does not fit caches with %lld heads",
                    static_cast<long long>(B), static_cast<long long>(Hq), static_cast<long long>(T),
                    static_cast<long long>(D), static_cast<long long>(Hkv));
  int64_t start = 0;
  Error e = detail::read_start_pos(ctx, "sdpa", args[3]->tensor, S - T, &start);
  if (e != Error::Ok) return e;
  e = detail::resize_output(ctx, "sdpa", out, q.sizes, 4);
  if (e != Error::Ok) return e;
  float* scores = static_cast<float*>(ctx.allocate_temp(static_cast<size_t>(start + T) * sizeof(float)));
  if (scores == nullptr) return ctx.fail(Error::OutOfMemory, "sdpa: no scratch memory for %lld scores",
                                         static_cast<long long>(start + T));
  const int64_t group = Hq / Hkv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const float* kh = k.data_as<float>() + ((b * Hkv + h / group) * S) * D;  // (S, D)
      const float* vh = v.data_as<float>() + ((b * Hkv + h / group) * S) * D;
      for (int64_t t = 0; t < T; ++t) {
        const float* qt = q.data_as<float>() + ((b * Hq + h) * T + t) * D;
        float* ot = out.data_as<float>() + ((b * Hq + h) * T + t) * D;
        const int64_t len = start + t + 1;  // causal: positions 0 .. start+t
        float max = -INFINITY;
        for (int64_t j = 0; j < len; ++j) {
          float s = 0;
          for (int64_t d = 0; d < D; ++d) s += qt[d] * kh[j * D + d];
          scores[j] = s * scale;
          max = scores[j] > max ? scores[j] : max;
        }
        float sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += scores[j] = std::exp(scores[j] - max);
        for (int64_t d = 0; d < D; ++d) ot[d] = 0;
        for (int64_t j = 0; j < len; ++j) {
          const float w = scores[j] / sum;
          for (int64_t d = 0; d < D; ++d) ot[d] += w * vh[j * D + d];
        }
      }
    }
  return Error::Ok;
}

}  // namespace pocket
