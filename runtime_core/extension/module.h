// Module: a loaded program plus the memory to run it; the convenience layer under the
// C API and the Python binding. Methods are loaded on first use and keep their arenas;
// program-level mutable buffers (e.g. a KV cache) are allocated once and shared by all
// methods.
//
//   std::unique_ptr<pocket::Module> m;
//   std::string err;
//   if (pocket::Module::load_file("model.pocket", pocket::FileData::Mode::Mmap, &m, &err) != pocket::Error::Ok)
//     fprintf(stderr, "%s\n", err.c_str());
//   pocket::Method* forward = nullptr;
//   m->method("forward", &forward, &err);
#pragma once

#include <map>
#include <memory>
#include <string>

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

  // The method called `name`, loaded on first use. *out is owned by the module.
  Error method(const std::string& name, Method** out, std::string* message);

  // Binds `inputs` (borrowed until it returns) and runs `name`. Outputs stay readable through
  // the returned method until the next execute.
  Error execute(const std::string& name, const Tensor* inputs, size_t n_inputs, Method** out,
                std::string* message);

  // Threads the kernels use: n >= 1, or 0 for default_num_threads() (the performance cores).
  void set_num_threads(int n);
  int num_threads() const { return pool_ ? pool_->num_threads() : 1; }

  // Restores every mutable buffer to its initial value (e.g. clears a KV cache).
  void reset_buffers();

 private:
  struct LoadedMethod {
    HeapAllocator memory;
    HeapAllocator temp;
    Method method;
  };

  Error init(std::unique_ptr<FileData> data, std::string* message);
  static Error create(std::unique_ptr<FileData> data, const std::string& name, std::unique_ptr<Module>* out,
                      std::string* message);

  std::unique_ptr<FileData> data_;
  Program program_;
  HeapAllocator buffer_memory_;
  std::unique_ptr<void*[]> buffers_;
  std::map<std::string, std::unique_ptr<LoadedMethod>> methods_;
  std::unique_ptr<ThreadPool> pool_;  // null: the calling thread only
};

}  // namespace pocket
