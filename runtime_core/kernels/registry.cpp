// The portable kernel table (generated from tables/*.txt).
#include "pocket/kernel.h"

namespace pocket {

#include "registry_table.inc"

Span<const KernelEntry> portable_kernels() {
  return {kPortableKernels, sizeof kPortableKernels / sizeof kPortableKernels[0]};
}

}  // namespace pocket
