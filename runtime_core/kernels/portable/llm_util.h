// Helpers shared by the LLM kernels (pocket::update_cache, pocket::sdpa).
#pragma once

#include "util.h"

namespace pocket {
namespace detail {

// Reads the one int64 of a position tensor, checked to lie in [0, limit].
inline Error read_start_pos(KernelContext& ctx, const char* op, const Tensor& pos, int64_t limit, int64_t* out) {
  if (pos.numel() != 1 || (pos.dtype != ScalarType::Int64 && pos.dtype != ScalarType::Int32))
    return ctx.fail(Error::InvalidArgument, "%s: start_pos must be one int64 or int32, got %s with %lld elements", op,
                    scalar_type_name(pos.dtype), static_cast<long long>(pos.numel()));
  int64_t p = pos.dtype == ScalarType::Int64 ? *pos.data_as<int64_t>() : *pos.data_as<int32_t>();
  if (p < 0 || p > limit)
    return ctx.fail(Error::OutOfRange, "%s: start_pos %lld outside [0, %lld]", op, static_cast<long long>(p),
                    static_cast<long long>(limit));
  *out = p;
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
