// ScratchArena (extension/heap_allocator.h), the temp allocator of a Module's methods: one
// retained block after the first call, heap blocks past it, the budget kept exact. And
// KernelContext::kept_block, the memory a kernel keeps with its instruction across calls.
#include <cstdint>
#include <cstring>

#include "../extension/heap_allocator.h"
#include "cpp_check.h"

namespace {

bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

struct Key {
  double scale;
  int64_t channels;
};

// 4 KiB of method memory (a class of this file: the core has no RTTI for UBSan's checks).
class FixedArena final : public pocket::MemoryAllocator {
 public:
  void* allocate(size_t size, size_t alignment) override {
    const size_t at = (used_ + alignment - 1) / alignment * alignment;
    if (at > sizeof memory_ || size > sizeof memory_ - at) return nullptr;
    used_ = at + size;
    return memory_ + at;
  }
  void reset() override { used_ = 0; }
  size_t used() const { return used_; }

 private:
  alignas(64) uint8_t memory_[4096];
  size_t used_ = 0;
};

// kept_block: one block per instruction, for one key, only with its constant arguments.
void kept_blocks() {
  static FixedArena persistent;
  const size_t memory_size = 4096;
  void* state = nullptr;
  pocket::KernelContext ctx;
  bool ready = true;
  const Key key{0.5, 16};
  CHECK(ctx.kept_block(0, &key, sizeof key, 64, &ready) == nullptr && !ready);  // a call outside a method
  ctx.state = &state;
  ctx.persistent = &persistent;
  ctx.constant_args = 0b0110;
  CHECK(ctx.kept_block(0b1110, &key, sizeof key, 64, &ready) == nullptr);  // args[3] is not a constant
  CHECK(state == nullptr && persistent.used() == 0);
  auto* block = static_cast<uint8_t*>(ctx.kept_block(0b0110, &key, sizeof key, 64, &ready));
  CHECK(block != nullptr && !ready && aligned(block, 64) && state != nullptr);
  std::memset(block, 7, 64);
  CHECK(ctx.kept_block(0b0110, &key, sizeof key, 64, &ready) == block && !ready);  // not filled yet
  ctx.kept_ready(block + 64);  // not the block: nothing marked
  ctx.kept_ready(nullptr);     // a call that derived into temp memory
  CHECK(ctx.kept_block(0b0110, &key, sizeof key, 64, &ready) == block && !ready);
  ctx.kept_ready(block);
  CHECK(ctx.kept_block(0b0110, &key, sizeof key, 64, &ready) == block && ready && block[63] == 7);
  const Key other{0.25, 16};
  CHECK(ctx.kept_block(0b0110, &other, sizeof other, 64, &ready) == nullptr && !ready);  // another key
  CHECK(ctx.kept_block(0b0110, &key, sizeof key, 128, &ready) == nullptr);             // another size
  CHECK(ctx.kept_block(0b0110, &key, sizeof key, 64, &ready) == block && ready);       // still kept
  // No memory left: nothing kept, the kernel derives into temp memory.
  void* state2 = nullptr;
  ctx.state = &state2;
  CHECK(ctx.kept_block(0, &key, sizeof key, memory_size, &ready) == nullptr && state2 == nullptr);
  CHECK(ctx.kept_block(0, &key, sizeof key, SIZE_MAX, &ready) == nullptr && state2 == nullptr);
}

}  // namespace

int main() {
  using pocket::MemoryBudget;
  using pocket::ScratchArena;
  MemoryBudget budget;
  {
    ScratchArena arena(&budget);
    // A call: alignment honoured, distinct regions that can all be written.
    uint8_t* a = static_cast<uint8_t*>(arena.allocate(100, 64));
    uint8_t* b = static_cast<uint8_t*>(arena.allocate(3000, 256));
    uint8_t* c = static_cast<uint8_t*>(arena.allocate(1, 1));
    CHECK(a != nullptr && b != nullptr && c != nullptr);
    CHECK(aligned(a, 64) && aligned(b, 256) && aligned(c, sizeof(void*)));
    std::memset(a, 1, 100);
    std::memset(b, 2, 3000);
    *c = 3;
    CHECK(a[99] == 1 && b[0] == 2 && b[2999] == 2 && *c == 3);
    arena.reset();
    const uint64_t held = budget.used;  // the block kept for the next call (0 under ASan)
    // Later calls of the same size reuse the block: the budget does not move.
    for (int call = 0; call < 3; ++call) {
      uint8_t* x = static_cast<uint8_t*>(arena.allocate(100, 64));
      uint8_t* y = static_cast<uint8_t*>(arena.allocate(3000, 256));
      CHECK(x != nullptr && y != nullptr && aligned(x, 64) && aligned(y, 256));
      CHECK(x + 100 <= y || y + 3000 <= x);
      std::memset(x, 4, 100);
      std::memset(y, 5, 3000);
      CHECK(x[0] == 4 && y[2999] == 5);
      arena.reset();
      CHECK(budget.used == held);
    }
    // A bigger call spills to the heap, then gets one block that holds it all.
    void* big = arena.allocate(1 << 20, 64);
    CHECK(big != nullptr && aligned(big, 64));
    std::memset(big, 6, 1 << 20);
    arena.reset();
    CHECK(budget.used >= held);
    void* again = arena.allocate(1 << 20, 64);
    CHECK(again != nullptr && aligned(again, 64));
    std::memset(again, 7, 1 << 20);
    arena.reset();
  }
  CHECK(budget.used == 0);  // everything returned on destruction

  // Over the budget: the allocation is refused (null, refused recorded) and nothing leaks.
  MemoryBudget small;
  small.limit = 4096;
  {
    ScratchArena arena(&small);
    CHECK(arena.allocate(1 << 16, 64) == nullptr);
    CHECK(small.refused == (1 << 16));
    CHECK(arena.allocate(1000, 64) != nullptr);
    arena.reset();
    CHECK(small.used <= small.limit);
    CHECK(arena.allocate(1000, 64) != nullptr);
    arena.reset();
  }
  CHECK(small.used == 0);

  // A call the budget cannot hold: refused; the block kept so far stays, and the next calls of
  // the old size still run from it.
  MemoryBudget mid;
  mid.limit = 128 << 10;
  {
    ScratchArena arena(&mid);
    CHECK(arena.allocate(1000, 64) != nullptr);
    arena.reset();
    const uint64_t held = mid.used;
    CHECK(arena.allocate(200 << 10, 64) == nullptr);  // over the limit on its own
    arena.reset();
    CHECK(mid.used == held);
    CHECK(arena.allocate(1000, 64) != nullptr);
    arena.reset();
    CHECK(mid.used == held);
  }
  CHECK(mid.used == 0);

  kept_blocks();
  return pocket_test::report("scratch_arena_test");
}
