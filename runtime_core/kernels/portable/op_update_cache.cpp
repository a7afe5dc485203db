// pocket::update_cache(Tensor cache, Tensor value, Tensor start_pos) -> Tensor
//
// Writes value [B, H, T, D] into cache [B, H, S, D] at positions start_pos .. start_pos+T-1.
// When the output is the cache itself (the exporter runs it in place on a mutable buffer)
// only the new rows are written; otherwise the cache is copied first. value has the cache's
// dtype, or is float32 for a float16 cache (an fp16 KV cache: rounded to nearest even).
#include "llm_util.h"
#include "convert.h"

namespace pocket {

Error op_update_cache(KernelContext& ctx, Value** args) {
  const Tensor& cache = args[0]->tensor;
  const Tensor& value = args[1]->tensor;
  Tensor& out = args[3]->tensor;
  const bool to_half = cache.dtype == ScalarType::Float16 && value.dtype == ScalarType::Float32;
  if (cache.dim != 4 || value.dim != 4 || (value.dtype != cache.dtype && !to_half) || out.dtype != cache.dtype)
    return ctx.fail(Error::InvalidArgument,
                    "update_cache: expected 4-d cache and value of one dtype (or a float16 cache and float32 "
                    "value), got %s cache, %s value", scalar_type_name(cache.dtype), scalar_type_name(value.dtype));
  for (int d : {0, 1, 3})
    if (value.sizes[d] != cache.sizes[d])
      return ctx.fail(Error::InvalidArgument, "update_cache: value dim %d is %lld, cache has %lld", d,
                      static_cast<long long>(value.sizes[d]), static_cast<long long>(cache.sizes[d]));
  if (!cache.is_contiguous() || !value.is_contiguous())
    return ctx.fail(Error::InvalidArgument, "update_cache: cache and value must be contiguous");
  const int64_t S = cache.sizes[2], T = value.sizes[2];
  int64_t start = 0;
  Error e = detail::read_start_pos(ctx, "update_cache", args[2]->tensor, S - T, &start);
  if (e != Error::Ok) return e;
  e = detail::resize_output(ctx, "update_cache", out, cache.sizes, cache.dim);
  if (e != Error::Ok) return e;
  const size_t row = static_cast<size_t>(cache.sizes[3]) * element_size(cache.dtype);
  uint8_t* dst = static_cast<uint8_t*>(out.data);
  if (dst != cache.data) memmove(dst, cache.data, cache.nbytes());
  if (to_half) {
    const int64_t D = cache.sizes[3];
    const float* src = value.data_as<const float>();
    uint16_t* dst16 = reinterpret_cast<uint16_t*>(dst);
    for (int64_t bh = 0; bh < cache.sizes[0] * cache.sizes[1]; ++bh)  // (batch, head)
      for (int64_t i = 0; i < T * D; ++i) dst16[(bh * S + start) * D + i] = detail::float_to_half(src[bh * T * D + i]);
    return Error::Ok;
  }
  const uint8_t* src = static_cast<const uint8_t*>(value.data);
  for (int64_t bh = 0; bh < cache.sizes[0] * cache.sizes[1]; ++bh)  // (batch, head)
    memmove(dst + (bh * S + start) * row, src + bh * T * row, static_cast<size_t>(T) * row);
  return Error::Ok;
}

}  // namespace pocket
