// Reflection and replication padding of the last 1, 2 or 3 dims (F.pad's "reflect" and
// "replicate" modes). Nothing here allocates except kernel temp memory.
#pragma once

#include "nn_util.h"

namespace pocket {
namespace detail {

enum class PadMode { Reflect, Replicate };

// out = in padded by `padding` (left, right of the last dim, then of the dim before, ...:
// 2 * `dims` items, as F.pad). Reflection needs each pad smaller than its dim.
Error pad_nd(KernelContext& ctx, const char* op, const Tensor& in, const IntList& padding, int dims,
             PadMode mode, Tensor& out);

}  // namespace detail
}  // namespace pocket
