// WorkerPool: the ThreadPool the extension layer gives to methods. Workers start on the first
// job that needs them (loading a model starts no thread), spin briefly between jobs (an LLM's
// decode step runs hundreds of short parallel kernels) and then sleep.
//
// One run() at a time: a pool belongs to one Module, whose lock serializes its calls.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "pocket/kernel.h"

namespace pocket {

class WorkerPool final : public ThreadPool {
 public:
  // `num_threads` counts the calling thread: 2 starts one worker.
  explicit WorkerPool(int num_threads);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_threads() const override { return num_threads_; }
  void run(size_t n, void (*fn)(void*, size_t), void* arg) override;

 private:
  void work_loop();
  void drain(size_t n, void (*fn)(void*, size_t), void* arg);
  void start_workers();

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> next_{0};
  std::atomic<size_t> done_{0};
  std::atomic<int> in_job_{0};  // workers that took a job's fields and have not left its drain()
  std::atomic<bool> stopping_{false};
  // The current job; written under mutex_ only while no worker is inside a drain().
  size_t n_ = 0;
  void (*fn_)(void*, size_t) = nullptr;
  void* arg_ = nullptr;
};

// The default thread count: the performance cores (on Linux, the cores with the highest
// maximum frequency; elsewhere all of them), at least 1.
int default_num_threads();

}  // namespace pocket
