// Kernels and the explicit kernel registry.
//
// A kernel is one plain function per op overload:
//
//   Error op_add_tensor(KernelContext& ctx, Value** args);
//
// `args` holds the op's arguments in ATen schema order, then its outputs. Each registry
// entry carries a signature string, checked against the program when a method is loaded,
// so a kernel may rely on the kinds of its arguments (dtypes and shapes it must still check):
//
//   T tensor      t tensor or None     i int        j int or None (also ScalarType args)
//   f double      g double or None     s scalar (int, double or bool)        b bool
//   I int list    J int list or None   F double list    L tensor list
//   M list of optional tensors         S string         > separates inputs from outputs
//
// For example aten::add.Tensor is "TTs>T": self, other, alpha, then the output.
// Kernels never allocate from the heap: scratch memory comes from ctx.allocate_temp().
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocket/error.h"
#include "pocket/span.h"
#include "pocket/value.h"

namespace pocket {

class ThreadPool;

// Memory source for a method's tables, arenas and kernel scratch space.
class MemoryAllocator {
 public:
  virtual ~MemoryAllocator() = default;
  // Returns `size` bytes aligned to `alignment` (a power of two), or nullptr.
  virtual void* allocate(size_t size, size_t alignment) = 0;
  // Releases everything allocated so far (used for per-kernel scratch).
  virtual void reset() = 0;
};

// A bump allocator over caller memory; heap-free.
class BumpAllocator final : public MemoryAllocator {
 public:
  BumpAllocator(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}
  void* allocate(size_t size, size_t alignment) override;
  void reset() override { used_ = 0; }
  size_t used() const { return used_; }

 private:
  uint8_t* base_;
  size_t size_;
  size_t used_ = 0;
};

struct KernelContext {
  Diag* diag = nullptr;
  MemoryAllocator* temp = nullptr;  // may be null: allocate_temp then fails cleanly
  ThreadPool* threads = nullptr;    // may be null: run single-threaded

  // Records a message (printf-style) and returns `e`:
  //   return ctx.fail(Error::InvalidArgument, "self has %d dims, expected 4", x.dim);
  Error fail(Error e, const char* fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;
  // Scratch memory valid until the kernel returns; nullptr when none is available.
  void* allocate_temp(size_t size, size_t alignment = 64);
};

using KernelFn = Error (*)(KernelContext& ctx, Value** args);

struct KernelEntry {
  const char* name;       // "aten::add.Tensor"; the default overload has no suffix: "aten::relu"
  const char* signature;  // see above
  KernelFn fn;
};

// The portable kernels, sorted by name. Generated from runtime_core/kernels/tables/*.txt.
Span<const KernelEntry> portable_kernels();

// Looks `name` ("aten::add") and `overload` ("Tensor", or "" / "default") up in `table`.
const KernelEntry* find_kernel(Span<const KernelEntry> table, const char* name,
                               const char* overload);

// Number of arguments (inputs plus outputs) a signature describes.
size_t signature_arity(const char* signature);

// Whether `v` fits signature character `kind`.
bool value_matches(const Value& v, char kind);

}  // namespace pocket
