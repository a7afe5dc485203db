// Module: a loaded program plus the memory to run it; the convenience layer under the
// C API and the Python binding. Methods are loaded on first use and keep their arenas;
// program-level mutable buffers (e.g. a KV cache) are allocated on first use too, once, and
// shared by all methods.
//
// Threads: every member may be called from any thread. Calls that touch the methods, their
// memory or the thread pool hold the module's lock, so calls on one module run one at a time
// (its arenas are shared); separate modules run in parallel. program() is immutable.
//
// Memory: arenas, buffers and kernel scratch space are allocated against a limit (by default
// the machine's physical memory); a file that declares more is refused with OutOfMemory
// before anything is allocated.
//
//   std::unique_ptr<pocket::Module> m;
//   std::string err;
//   if (pocket::Module::load_file("model.pocket", pocket::FileData::Mode::Mmap, &m, &err) != pocket::Error::Ok)
//     fprintf(stderr, "%s\n", err.c_str());
//   std::vector<float> y;
//   m->execute("forward", inputs, 1, [&](const pocket::Method& method) { /* copy method.output(0) */ }, &err);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "file_data.h"
#include "heap_allocator.h"
#include "thread_pool.h"
#include "pocket/method.h"
#include "pocket/program.h"

namespace pocket {

class Module {
 public:
  static Error load_file(const std::string& path, FileData::Mode mode, std::unique_ptr<Module>* out,
                         std::string* message);
  // The program in the `length` bytes of `fd` (borrowed for the call) at `offset`: see
  // FileData::open_fd. Messages name the region as "fd N, offset O, length L".
  static Error load_fd(int fd, uint64_t offset, uint64_t length, FileData::Mode mode,
                       std::unique_ptr<Module>* out, std::string* message);
  // Copies `size` bytes at `data`.
  static Error load_buffer(const void* data, size_t size, std::unique_ptr<Module>* out,
                           std::string* message);

  const Program& program() const { return program_; }
  // True when the program is used in place from a file mapping (no copy).
  bool mapped() const { return data_ && data_->mapped(); }

  // The method called `name`, loaded on first use. *out is owned by the module and lives as
  // long as it; without the lock only its description (input/output specs, counts, arena
  // sizes, metadata) may be read: run it through execute().
  Error method(const std::string& name, Method** out, std::string* message);

  // Reads a method's outputs (they point into its arenas) while the module is still locked.
  // It must not call the module.
  using OutputReader = std::function<void(const Method&)>;

  // Binds `inputs` (borrowed for the call), runs `name`, then passes the method to `read`,
  // all under the module's lock: a caller on another thread waits until it returns.
  Error execute(const std::string& name, const Tensor* inputs, size_t n_inputs, const OutputReader& read,
                std::string* message);

  // Threads the kernels use: n >= 1, or 0 for default_num_threads() (the performance cores).
  // Waits for a running execute() and applies to the calls after it.
  void set_num_threads(int n);
  int num_threads() const;

  // Bytes of memory the module may allocate for arenas, mutable buffers and kernel scratch
  // space, in total; by default physical_memory_bytes(). An allocation that would pass it fails
  // with OutOfMemory (the message names the limit) before anything is allocated. Memory already
  // held is kept when the limit is lowered under it.
  void set_memory_limit(uint64_t bytes);
  uint64_t memory_limit() const;

  // Restores every mutable buffer to its initial value (e.g. clears a KV cache).
  void reset_buffers();

  // Profiling: while on, every execute() adds each instruction's calls and time to its method's
  // profile (Method::set_profile). Turning it on clears the counts; off drops them.
  void set_profiling(bool on);
  // A copy of method `name`'s profile: one entry per instruction in program order, counts zero
  // until it runs. Fails with InvalidArgument while profiling is off.
  Error profile(const std::string& name, std::vector<StepProfile>* out, std::string* message);

 private:
  struct LoadedMethod {
    explicit LoadedMethod(MemoryBudget* budget) : memory(budget), temp(budget) {}
    HeapAllocator memory;
    ScratchArena temp;
    Method method;
    std::vector<StepProfile> profile;  // while profiling
  };

  // Gives `lm` a zeroed profile, one entry per instruction, that its method counts into.
  static void start_profile(LoadedMethod& lm);
  // The next three are called with mutex_ held.
  Error load_method(const std::string& name, Method** out, std::string* message);
  Error allocate_buffers(std::string* message);
  // Names the limit in `message` when `e` came from an allocation the budget refused.
  Error explain_refusal(Error e, std::string* message);

  Error init(std::unique_ptr<FileData> data, std::string* message);
  static Error create(std::unique_ptr<FileData> data, const std::string& name, std::unique_ptr<Module>* out,
                      std::string* message);

  std::unique_ptr<FileData> data_;
  Program program_;
  // Everything below is guarded by mutex_.
  mutable std::mutex mutex_;
  MemoryBudget budget_;
  HeapAllocator buffer_memory_{&budget_};
  std::unique_ptr<void*[]> buffers_;  // null until a method is loaded
  std::map<std::string, std::unique_ptr<LoadedMethod>> methods_;
  std::unique_ptr<ThreadPool> pool_;  // null: the calling thread only
  bool profiling_ = false;
};

}  // namespace pocket
