#include "heap_allocator.h"

#include <cstdlib>

namespace pocket {

void* HeapAllocator::allocate(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  blocks_.push_back(p);
  return p;
}

void HeapAllocator::reset() {
  for (void* p : blocks_) free(p);
  blocks_.clear();
}

}  // namespace pocket
