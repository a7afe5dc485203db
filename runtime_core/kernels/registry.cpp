// The portable kernel table (generated from tables/*.txt).
#include "pocket/kernel.h"

namespace pocket {

// A selective build (CMake POCKET_KERNEL_TABLE, written by gen_registry.py --select) names its
// own table; every kernel it leaves out is dropped by the linker.
#ifdef POCKET_KERNEL_TABLE
#include POCKET_KERNEL_TABLE
#else
#include "registry_table.inc"
#endif

Span<const KernelEntry> portable_kernels() {
  return {kPortableKernels, sizeof kPortableKernels / sizeof kPortableKernels[0]};
}

}  // namespace pocket
