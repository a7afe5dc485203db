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
//   I int list    J int list or None   F double list    G double list or None
//   L tensor list
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

// Threads the kernels may split work over. The core starts no threads: the extension layer
// implements this (a pool of workers) and hands it to methods; without one, kernels run on
// the calling thread.
class ThreadPool {
 public:
  virtual ~ThreadPool() = default;
  // Threads taking part in run(), the caller included.
  virtual int num_threads() const = 0;
  // Calls fn(arg, i) for every i in [0, n), spread over the pool and the calling thread;
  // returns when all calls are done. Calls must not allocate temp memory (allocate before).
  virtual void run(size_t n, void (*fn)(void* arg, size_t i), void* arg) = 0;
};

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
  // Scratch memory valid until the kernel returns; nullptr when none is available. Not
  // thread-safe: allocate before parallel_for.
  void* allocate_temp(size_t size, size_t alignment = 64);

  // What a kernel derives from its constant arguments (a quantized convolution's per-channel
  // sums and scales), kept with its instruction for the next calls: see kept_block. A method
  // sets these; a kernel called any other way has none and derives every time.
  void** state = nullptr;                // the instruction's kept block, null until one is made
  MemoryAllocator* persistent = nullptr;  // memory that lives as long as the method
  uint64_t constant_args = 0;            // bit a: args[a] is a tensor in the program's constants

  // The instruction's kept block of `size` bytes for `key` (key_size bytes, with no padding:
  // everything the data depends on besides the constant arguments in `constant_mask`: scalar
  // arguments, shapes, the kernel variant). *ready tells whether an earlier call filled it;
  // when not, fill it and call kept_ready(block). nullptr (derive into temp memory) when
  // nothing can be kept: an argument of the mask is not a program constant, no state or
  // memory, or the instruction keeps a block for another key already.
  void* kept_block(uint64_t constant_mask, const void* key, size_t key_size, size_t size, bool* ready);
  // Marks `block` filled, when it is the one kept_block gave this instruction (else nothing).
  // The block belongs to the method (MethodMemory.allocator) and lives as long as it; the
  // kernel never frees it. For example, a weight's sums per output channel (args[1] constant):
  //
  //   struct Key { int64_t channels, k; } key{c_out, k};  // whole 8-byte fields
  //   bool ready = false;
  //   auto* sums = static_cast<int32_t*>(ctx.kept_block(uint64_t{1} << 1, &key, sizeof key, c_out * 4, &ready));
  //   if (sums == nullptr) { /* temp memory (ctx.allocate_temp), filled below every call */ }
  //   if (!ready) { /* fill sums */ ctx.kept_ready(sums); }
  void kept_ready(const void* block);

  int num_threads() const { return threads == nullptr ? 1 : threads->num_threads(); }

  // Runs f(begin, end) over [0, n) in chunks of at least `grain` items, in parallel when a
  // pool is present. f must be safe to call concurrently on disjoint ranges.
  template <typename F>
  void parallel_for(int64_t n, int64_t grain, F&& f) {
    const int64_t t = num_threads();
    int64_t chunks = grain > 0 ? (n + grain - 1) / grain : n;
    chunks = chunks < t ? chunks : t;
    if (chunks <= 1) {
      if (n > 0) f(int64_t(0), n);
      return;
    }
    struct Job {
      F* f;
      int64_t n, chunks;
    } job{&f, n, chunks};
    threads->run(static_cast<size_t>(chunks), [](void* arg, size_t i) {
      Job* j = static_cast<Job*>(arg);
      const int64_t begin = j->n * static_cast<int64_t>(i) / j->chunks;
      const int64_t end = j->n * static_cast<int64_t>(i + 1) / j->chunks;
      if (begin < end) (*j->f)(begin, end);
    }, &job);
  }
};

using KernelFn = Error (*)(KernelContext& ctx, Value** args);

struct KernelEntry {
  const char* name;       // "aten::add.Tensor"; the default overload has no suffix: "aten::relu"
  const char* signature;  // see above
  KernelFn fn;
};

// The portable kernels, sorted by name. Generated from runtime_core/kernels/tables/*.txt.
Span<const KernelEntry> portable_kernels();

// The portable table with each op replaced by its fastest kernel for this CPU (features
// detected at run time; POCKET_KERNELS=portable in the environment turns that off, and
// POCKET_KERNELS=avx2 / avxvnni / avx512 / neon / neondot caps the set; another value is
// reported on stderr and ignored).
// Same names and order as portable_kernels(). Built once; static storage.
Span<const KernelEntry> best_kernels();

// Looks `name` ("aten::add") and `overload` ("Tensor", or "" / "default") up in `table`.
const KernelEntry* find_kernel(Span<const KernelEntry> table, const char* name,
                               const char* overload);

// Fails with Unsupported and the one message for an op `table` lacks ("method 'forward':
// unknown op 'aten::x.y' (operator 3): ..."), shared by load-time and method-load checks.
Error fail_unknown_op(Diag& diag, const char* method, const char* name, const char* overload,
                      uint32_t index);

// Number of arguments (inputs plus outputs) a signature describes.
size_t signature_arity(const char* signature);

// Whether `v` fits signature character `kind`.
bool value_matches(const Value& v, char kind);

}  // namespace pocket
