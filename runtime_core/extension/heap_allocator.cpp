#include "heap_allocator.h"

#include <unistd.h>

#include <cstdlib>

namespace pocket {

void* HeapAllocator::allocate(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size == 0) size = 1;
  if (budget_ != nullptr && size > budget_->limit - budget_->used) {
    budget_->refused = size;
    return nullptr;
  }
  blocks_.reserve(blocks_.size() + 1);  // may throw; nothing is allocated yet
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0) return nullptr;
  blocks_.emplace_back(p, size);
  if (budget_ != nullptr) budget_->used += size;
  return p;
}

void HeapAllocator::reset() {
  for (const auto& block : blocks_) {
    free(block.first);
    if (budget_ != nullptr) budget_->used -= block.second;
  }
  blocks_.clear();
}

uint64_t physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
#endif
  return uint64_t(1) << 40;
}

}  // namespace pocket
