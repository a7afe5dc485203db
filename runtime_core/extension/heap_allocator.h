// A MemoryAllocator over the heap, for the extension layer: every allocation is released
// by reset() or when the allocator is destroyed. Allocators may share a MemoryBudget, which
// refuses an allocation that would take them past its limit before anything is allocated.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "pocket/kernel.h"

namespace pocket {

// Bytes a group of allocators may hold together. Not synchronized: the allocators sharing it
// are used under one lock (a Module's).
struct MemoryBudget {
  uint64_t limit = UINT64_MAX;
  uint64_t used = 0;
  uint64_t refused = 0;  // size of the last allocation refused for the limit (0: none)
};

class HeapAllocator final : public MemoryAllocator {
 public:
  // budget: borrowed, must outlive the allocator; nullptr for no limit.
  explicit HeapAllocator(MemoryBudget* budget = nullptr) : budget_(budget) {}
  HeapAllocator(const HeapAllocator&) = delete;
  HeapAllocator& operator=(const HeapAllocator&) = delete;
  ~HeapAllocator() override { reset(); }
  void* allocate(size_t size, size_t alignment) override;
  void reset() override;

 private:
  std::vector<std::pair<void*, size_t>> blocks_;
  MemoryBudget* budget_;
};

// Kernel scratch memory (a method's temp allocator, reset after every kernel): a bump
// allocator over one block that it keeps from call to call, grown at reset() to the most a
// call has asked for. After the first run a kernel's scratch costs no malloc or free, and no
// page faults on fresh memory. Within a call, what the block cannot hold comes from the heap.
// The block counts against the budget while it is held.
class ScratchArena final : public MemoryAllocator {
 public:
  explicit ScratchArena(MemoryBudget* budget = nullptr) : spill_(budget), budget_(budget) {}
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;
  ~ScratchArena() override;
  void* allocate(size_t size, size_t alignment) override;
  void reset() override;

 private:
  void release_block();

  HeapAllocator spill_;
  MemoryBudget* budget_;
  uint8_t* block_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
  size_t asked_ = 0;  // bytes (with alignment slack) asked for since the last reset()
};

// Physical memory of this machine in bytes (the default memory limit of a Module); 1 TiB
// when the system does not say.
uint64_t physical_memory_bytes();

}  // namespace pocket
