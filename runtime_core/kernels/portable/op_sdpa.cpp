// pocket::sdpa(Tensor q, Tensor k_cache, Tensor v_cache, Tensor start_pos, float scale) -> Tensor
//
// Causal attention of q [B, Hq, T, D] at positions start_pos .. start_pos+T-1 over the first
// start_pos+T positions of k_cache/v_cache [B, Hkv, S, D]; query head h reads kv head
// h / (Hq / Hkv) (grouped-query attention). float32; the caches may be float16 (an fp16 KV
// cache; each kv head's rows are widened to float32 scratch before use). Parallel over
// (batch, head).
#include <cmath>

#include "llm_util.h"
#include "parallel_util.h"
#include "parts.h"
#include "convert.h"

namespace pocket {
namespace detail {

Error prepare_sdpa(KernelContext& ctx, Value** args, SdpaArgs* a) {
  const Tensor& q = args[0]->tensor;
  const Tensor& k = args[1]->tensor;
  const Tensor& v = args[2]->tensor;
  Tensor& out = args[5]->tensor;
  if (q.dim != 4 || k.dim != 4 || v.dim != 4)
    return ctx.fail(Error::InvalidArgument, "sdpa: q, k_cache and v_cache must be 4-d");
  const bool half = k.dtype == ScalarType::Float16 && v.dtype == ScalarType::Float16;
  for (const Tensor* t : {&q, &k, &v, static_cast<const Tensor*>(&out)}) {
    if (half && (t == &k || t == &v)) continue;
    Error e = expect_dtype(ctx, "sdpa", t == &q ? "q" : t == &k ? "k_cache" : t == &v ? "v_cache" : "out", *t,
                           ScalarType::Float32);
    if (e != Error::Ok) return e;
  }
  for (const Tensor* t : {&q, &k, &v})
    if (!t->is_contiguous()) return ctx.fail(Error::InvalidArgument, "sdpa: inputs must be contiguous");
  const int64_t B = q.sizes[0], Hq = q.sizes[1], T = q.sizes[2], D = q.sizes[3];
  const int64_t Hkv = k.sizes[1], S = k.sizes[2];
  if (k.sizes[0] != B || v.sizes[0] != B || k.sizes[3] != D || v.sizes[3] != D || v.sizes[1] != Hkv ||
      v.sizes[2] != S || Hkv == 0 || Hq % Hkv != 0)
    return ctx.fail(Error::InvalidArgument, "sdpa: q [%lld, %lld, %lld, %lld] does not fit caches with %lld heads",
                    static_cast<long long>(B), static_cast<long long>(Hq), static_cast<long long>(T),
                    static_cast<long long>(D), static_cast<long long>(Hkv));
  Error e = read_start_pos(ctx, "sdpa", args[3]->tensor, S - T, &a->start);
  if (e != Error::Ok) return e;
  e = resize_output(ctx, "sdpa", out, q.sizes, 4);
  if (e != Error::Ok) return e;
  a->q = q.data_as<const float>();
  if (half) {
    a->k16 = k.data_as<const uint16_t>();
    a->v16 = v.data_as<const uint16_t>();
  } else {
    a->k = k.data_as<const float>();
    a->v = v.data_as<const float>();
  }
  a->out = out.data_as<float>();
  a->B = B;
  a->Hq = Hq;
  a->T = T;
  a->D = D;
  a->Hkv = Hkv;
  a->S = S;
  a->scale = static_cast<float>(args[4]->d);
  return Error::Ok;
}

namespace {

// Head (b, h): all T query rows over kh, vh (S, D), its kv head. `scores` holds start + T floats.
void attend_head(const SdpaArgs& a, int64_t b, int64_t h, const float* kh, const float* vh, float* scores) {
  const int64_t D = a.D, T = a.T;
  for (int64_t t = 0; t < T; ++t) {
    const float* qt = a.q + ((b * a.Hq + h) * T + t) * D;
    float* ot = a.out + ((b * a.Hq + h) * T + t) * D;
    const int64_t len = a.start + t + 1;  // causal: positions 0 .. start+t
    float max = -INFINITY;
    for (int64_t j = 0; j < len; ++j) {
      float s = 0;
      for (int64_t d = 0; d < D; ++d) s += qt[d] * kh[j * D + d];
      scores[j] = s * a.scale;
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

// Float16 caches: scratch for `slices` slices of one kv head's first start+T rows of K and V
// widened to float32 (null, and no allocation, for float32 caches).
Error sdpa_kv_scratch(KernelContext& ctx, const SdpaArgs& a, int64_t slices, float** kv) {
  *kv = nullptr;
  const int64_t len = a.start + a.T;
  return a.k16 == nullptr ? Error::Ok : temp_array(ctx, "sdpa", "float16 cache rows", slices * 2 * len * a.D, kv);
}

// The K and V rows (S or start+T of them, D floats apart) of query head (b, h): the caches'
// own for float32, else `scratch` (one slice's) filled with the widened rows unless *widened
// already names this kv head (start each slice with *widened = -1).
void sdpa_kv_head(const SdpaArgs& a, int64_t b, int64_t h, float* scratch, int64_t* widened, const float** kh,
                  const float** vh) {
  const int64_t kv = b * a.Hkv + h / (a.Hq / a.Hkv), len = a.start + a.T, n = len * a.D;
  if (a.k16 == nullptr) {
    *kh = a.k + kv * a.S * a.D;
    *vh = a.v + kv * a.S * a.D;
    return;
  }
  *kh = scratch;
  *vh = scratch + n;
  if (*widened == kv) return;
  for (int64_t i = 0; i < n; ++i) scratch[i] = half_to_float(a.k16[kv * a.S * a.D + i]);
  for (int64_t i = 0; i < n; ++i) scratch[n + i] = half_to_float(a.v16[kv * a.S * a.D + i]);
  *widened = kv;
}

}  // namespace

Error sdpa_portable(KernelContext& ctx, const SdpaArgs& a) {
  const int64_t heads = a.B * a.Hq, len = a.start + a.T;
  const int64_t slices = slice_count(ctx, heads, a.T * len * a.D * 2);
  float* scores = nullptr;  // per slice (start + T)
  float* kv = nullptr;
  Error e = temp_array(ctx, "sdpa", "scores", slices * len, &scores);
  if (e == Error::Ok) e = sdpa_kv_scratch(ctx, a, slices, &kv);
  if (e != Error::Ok) return e;
  parallel_slices(ctx, heads, slices, [&](int64_t s, int64_t begin, int64_t end) {
    int64_t widened = -1;
    for (int64_t i = begin; i < end; ++i) {
      const float *kh, *vh;
      sdpa_kv_head(a, i / a.Hq, i % a.Hq, kv ? kv + s * 2 * len * a.D : nullptr, &widened, &kh, &vh);
      attend_head(a, i / a.Hq, i % a.Hq, kh, vh, scores + s * len);
    }
  });
  return Error::Ok;
}

}  // namespace detail

Error op_sdpa(KernelContext& ctx, Value** args) {
  detail::SdpaArgs a;
  Error e = detail::prepare_sdpa(ctx, args, &a);
  return e != Error::Ok ? e : detail::sdpa_portable(ctx, a);
}

}  // namespace pocket
