// The optimized kernels: same signatures as the portable ones (kernels/tables/*.txt), each
// chosen only when the CPU has the features it was compiled for.
#pragma once

#include <cstddef>

#include "cpu_features.h"
#include "pocket/kernel.h"

namespace pocket {
namespace detail {

struct OptimizedKernel {
  const char* name;  // as in the portable table, e.g. "aten::linear"
  KernelFn fn;       // nullptr when this CPU lacks the features
};

// The optimized kernels for `features`, in no particular order.
Span<const OptimizedKernel> optimized_kernels(const CpuFeatures& features);

}  // namespace detail
}  // namespace pocket
