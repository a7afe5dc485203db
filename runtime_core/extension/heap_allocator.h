// A MemoryAllocator over the heap, for the extension layer: every allocation is released
// by reset() or when the allocator is destroyed.
#pragma once

#include <vector>

#include "pocket/kernel.h"

namespace pocket {

class HeapAllocator final : public MemoryAllocator {
 public:
  HeapAllocator() = default;
  HeapAllocator(const HeapAllocator&) = delete;
  HeapAllocator& operator=(const HeapAllocator&) = delete;
  ~HeapAllocator() override { reset(); }
  void* allocate(size_t size, size_t alignment) override;
  void reset() override;

 private:
  std::vector<void*> blocks_;
};

}  // namespace pocket
