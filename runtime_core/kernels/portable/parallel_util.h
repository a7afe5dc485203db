// Splitting a kernel's work over the method's thread pool (KernelContext::parallel_for).
//
// Work is counted in simple operations (multiply-adds): a chunk smaller than
// kMinParallelWork is not worth waking a thread for, so tiny ops stay on the calling thread.
// Kernels that need scratch memory per thread split their work into slices (at most one per
// thread), allocate one scratch block per slice first (allocate_temp is not thread-safe),
// then run the slices in parallel:
//
//   const int64_t slices = detail::slice_count(ctx, n, work_per_item);
//   float* scratch = ...allocate slices * size...;
//   detail::parallel_slices(ctx, n, slices, [&](int64_t s, int64_t begin, int64_t end) {
//     use scratch + s * size for items [begin, end)
//   });
#pragma once

#include <cstdint>

#include "pocket/kernel.h"

namespace pocket {
namespace detail {

constexpr int64_t kMinParallelWork = int64_t(1) << 15;

// Items per parallel chunk when each item costs `work` operations.
inline int64_t grain_for(int64_t work) {
  if (work >= kMinParallelWork) return 1;
  return work <= 0 ? kMinParallelWork : (kMinParallelWork + work - 1) / work;
}

// Slices parallel_slices splits n items of `work` operations each into: at most the thread
// count, each at least grain_for(work) items; at least 1.
inline int64_t slice_count(const KernelContext& ctx, int64_t n, int64_t work) {
  const int64_t g = grain_for(work);
  int64_t s = (n + g - 1) / g;
  const int64_t t = ctx.num_threads();
  s = s < t ? s : t;
  return s < 1 ? 1 : s;
}

// Calls f(slice, begin, end) for slice in [0, slices), [begin, end) its share of [0, n),
// in parallel (slices <= num_threads(), so each slice runs as one task).
template <typename F>
void parallel_slices(KernelContext& ctx, int64_t n, int64_t slices, F&& f) {
  ctx.parallel_for(slices, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t begin = n * s / slices, end = n * (s + 1) / slices;
      if (begin < end) f(s, begin, end);
    }
  });
}

}  // namespace detail
}  // namespace pocket
