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

ScratchArena::~ScratchArena() { release_block(); }

void ScratchArena::release_block() {
  if (block_ == nullptr) return;
  free(block_);
  if (budget_ != nullptr) budget_->used -= size_;
  block_ = nullptr;
  size_ = 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define POCKET_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POCKET_ASAN 1
#endif
#endif

void* ScratchArena::allocate(size_t size, size_t alignment) {
#if defined(POCKET_ASAN)
  // Under AddressSanitizer every allocation is its own heap block, so that a kernel writing
  // past its scratch is reported rather than landing in a neighbour's.
  return spill_.allocate(size, alignment);
#else
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  const size_t need = size + alignment;
  asked_ = need < size || asked_ + need < asked_ ? SIZE_MAX : asked_ + need;  // saturating
  const uintptr_t base = reinterpret_cast<uintptr_t>(block_);
  const size_t at = static_cast<size_t>(((base + used_ + alignment - 1) & ~(uintptr_t(alignment) - 1)) - base);
  if (block_ != nullptr && at <= size_ && size <= size_ - at) {
    used_ = at + size;
    return block_ + at;
  }
  return spill_.allocate(size, alignment);
#endif
}

void ScratchArena::reset() {
  spill_.reset();
  used_ = 0;
  // Next time one block holds all of this call's scratch (rounded up to 64 KiB: a few sizes,
  // not one per increment). When the budget or the heap cannot give it, the old block stays
  // and the rest keeps coming from the heap.
  const size_t want = asked_ > SIZE_MAX - 0xFFFF ? 0 : (asked_ + 0xFFFF) & ~size_t(0xFFFF);
  asked_ = 0;
  if (want <= size_) return;
  if (budget_ != nullptr && want > budget_->limit - (budget_->used - size_)) return;
  void* p = nullptr;
  if (posix_memalign(&p, 64, want) != 0) return;
  release_block();
  block_ = static_cast<uint8_t*>(p);
  size_ = want;
  if (budget_ != nullptr) budget_->used += want;
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
