// best_kernels(): the portable table with the optimized kernels this CPU can run swapped in.
#include <cstring>

#include "cpu_features.h"
#include "optimized.h"
#include "pocket/kernel.h"

namespace pocket {

namespace {

struct Table {
  KernelEntry entries[1024];
  size_t size = 0;
};

Table build() {
  Table t;
  Span<const KernelEntry> portable = portable_kernels();
  Span<const detail::OptimizedKernel> fast = detail::optimized_kernels(detail::cpu_features());
  for (const KernelEntry& e : portable) {
    if (t.size == sizeof t.entries / sizeof t.entries[0]) break;
    KernelEntry chosen = e;
    for (const detail::OptimizedKernel& o : fast)
      if (o.fn != nullptr && strcmp(o.name, e.name) == 0) chosen.fn = o.fn;
    t.entries[t.size++] = chosen;
  }
  return t;
}

}  // namespace

Span<const KernelEntry> best_kernels() {
  static const Table table = build();
  return {table.entries, table.size};
}

}  // namespace pocket
