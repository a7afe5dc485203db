// Method: one loaded, executable entry point of a Program (e.g. "forward", "prefill").
//
// Loading resolves every op against the kernel registry, checks each kernel call's argument
// kinds against the kernel's signature, checks every value (dtypes, shapes, locations, arena
// and buffer bounds) and binds planned tensors to arena memory. Executing runs the
// instruction list; kernels write into planned memory.
//
//   pocket::Method m;
//   pocket::Diag diag;
//   if (pocket::Method::load(program, "forward", memory, &m, diag) != pocket::Error::Ok) { ... }
//   m.set_input(0, x);            // binds caller memory (borrowed until execute returns)
//   m.execute();                  // on failure m.error_message() names the op and instruction
//   const pocket::Tensor& y = m.output(0).tensor;   // points into the arena
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocket/error.h"
#include "pocket/kernel.h"
#include "pocket/program.h"
#include "pocket/span.h"
#include "pocket/value.h"

namespace pocket {

struct MethodMemory {
  // Value table, instruction table, (when `arenas` is empty) the planned arenas and what
  // kernels keep from one execute() to the next (KernelContext::kept_block; a kernel derives
  // it again each time when this has no memory left). Must outlive the method.
  MemoryAllocator* allocator = nullptr;
  // Kernel scratch, reset after every kernel. May be null.
  MemoryAllocator* temp = nullptr;
  // Optional caller memory for each planned arena (64-byte aligned, at least arena_size(i)).
  Span<Span<uint8_t>> arenas;
  // Memory of each program-level mutable buffer (Program::buffer_nbytes(i) bytes each,
  // 64-byte aligned); required when the program has buffers. Shared by all methods.
  Span<void*> buffers;
  // Kernels to resolve ops against, sorted by name (e.g. portable_kernels()). The core
  // does not link any kernels itself, so a build holds only the kernels it lists.
  Span<const KernelEntry> kernels;
  ThreadPool* threads = nullptr;
};

// Expected dtype and shape bounds of an input or output.
struct TensorSpec {
  ScalarType dtype = ScalarType::Float32;
  int32_t dim = 0;
  int64_t min_sizes[kMaxDim] = {0};
  int64_t max_sizes[kMaxDim] = {0};
};

// One instruction's share of the runs since profiling began (Method::set_profile).
struct StepProfile {
  const char* op = nullptr;      // "aten::convolution" ("move" for a copy between values)
  const char* source = nullptr;  // its model source line, "net.py:12 in forward: y = self.conv(x)"; "" if unknown
  const char* layer = nullptr;   // its model submodule, "features.3.conv.0 (Conv2d)"; "" if unknown
  uint64_t calls = 0;
  uint64_t nanoseconds = 0;      // in all calls
};

struct Step;  // a decoded instruction (core/method_step.h)

class Method {
 public:
  static Error load(const Program& program, const char* name, const MethodMemory& memory,
                    Method* out, Diag& diag);

  const char* name() const { return name_; }
  size_t num_inputs() const { return inputs_.size; }
  size_t num_outputs() const { return outputs_.size; }
  // False when input i is not a tensor (ints and other values are fixed at export).
  bool input_spec(size_t i, TensorSpec* out) const;
  bool output_spec(size_t i, TensorSpec* out) const;
  // Per-method metadata (e.g. "output_spec"), or nullptr.
  const char* metadata(const char* key) const;
  size_t num_arenas() const { return arenas_.size; }
  size_t arena_size(size_t i) const;

  // Binds input i to `t`'s memory (borrowed until the next execute() returns; every
  // execute needs its inputs set again). Checks dtype, rank
  // and that each size lies within the exported bounds.
  Error set_input(size_t i, const Tensor& t);
  Error execute();
  const Value& output(size_t i) const { return values_[outputs_[i]]; }

  // Threads for the kernels from the next execute() on (nullptr: the calling thread only).
  void set_thread_pool(ThreadPool* pool) { threads_ = pool; }

  // Instructions, in the order execute() runs them.
  size_t num_steps() const { return steps_.size; }
  // Profiling: with `entries` (num_steps() of them, the caller's memory, kept until profiling
  // stops), names each entry's op and source, zeroes its counts, and from then on every
  // execute() adds each instruction's call and time (a monotonic clock read around it) to its
  // entry. nullptr stops.
  void set_profile(StepProfile* entries);

  // Message of the last failed set_input/execute.
  const char* error_message() const { return diag_.message; }

 private:
  Error load_values(const Program& program, const void* fb_method, const MethodMemory& memory,
                    Diag& diag);
  Error load_steps(const void* fb_method, const MethodMemory& memory, Diag& diag);
  void unbind_inputs();

  const char* name_ = nullptr;
  const void* fb_ = nullptr;  // const pocket::fb::Method*
  Span<Value> values_;
  Span<const uint32_t> inputs_;
  Span<const uint32_t> outputs_;
  Span<Step> steps_;
  Span<uint8_t*> arenas_;
  Span<uint64_t> arena_sizes_;
  MemoryAllocator* temp_ = nullptr;
  MemoryAllocator* allocator_ = nullptr;  // MethodMemory.allocator: the kernels' kept blocks
  ThreadPool* threads_ = nullptr;
  StepProfile* profile_ = nullptr;
  Diag diag_;
};

}  // namespace pocket
