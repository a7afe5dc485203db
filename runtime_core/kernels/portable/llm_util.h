// Helpers shared by the LLM kernels (pocket::update_cache, sdpa, rms_norm, rope, swiglu), and
// the pieces of rms_norm, rope and swiglu the optimized kernels reuse (as parts.h does for
// other ops): prepare_* checks the arguments and sizes the output, *_with splits the work over
// the thread pool and runs a row/range function on each share, the portable one or an ISA's.
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

// ---- pocket::rms_norm: y = x * rsqrt(mean(x², -1) + eps) * w, rows of d floats.
struct RmsNormArgs {
  const float* x = nullptr;  // (rows, d)
  const float* w = nullptr;  // (d)
  float* y = nullptr;        // (rows, d)
  int64_t rows = 0, d = 0;
  float eps = 0;
};
using RmsNormRowsFn = void (*)(const RmsNormArgs& a, int64_t r0, int64_t r1);
Error prepare_rms_norm(KernelContext& ctx, Value** args, RmsNormArgs* a);
void rms_norm_rows(const RmsNormArgs& a, int64_t r0, int64_t r1);
void rms_norm_with(KernelContext& ctx, const RmsNormArgs& a, RmsNormRowsFn rows);

// ---- pocket::rope: x (B, T, H, D), cos/sin (T, D); a row is one (b, t, head).
struct RopeArgs {
  const float* x = nullptr;
  const float* cos = nullptr;
  const float* sin = nullptr;
  float* y = nullptr;
  int64_t B = 0, T = 0, H = 0, D = 0;
};
using RopeRowsFn = void (*)(const RopeArgs& a, int64_t r0, int64_t r1);
Error prepare_rope(KernelContext& ctx, Value** args, RopeArgs* a);
void rope_rows(const RopeArgs& a, int64_t r0, int64_t r1);
void rope_with(KernelContext& ctx, const RopeArgs& a, RopeRowsFn rows);

// ---- pocket::swiglu: y[i] = silu(gate[i]) * up[i], n elements.
struct SwigluArgs {
  const float* gate = nullptr;
  const float* up = nullptr;
  float* y = nullptr;
  int64_t n = 0;
};
using SwigluRangeFn = void (*)(const SwigluArgs& a, int64_t i0, int64_t i1);
Error prepare_swiglu(KernelContext& ctx, Value** args, SwigluArgs* a);
void swiglu_range(const SwigluArgs& a, int64_t i0, int64_t i1);
void swiglu_with(KernelContext& ctx, const SwigluArgs& a, SwigluRangeFn range);

}  // namespace detail
}  // namespace pocket
