// WorkerPool: the ThreadPool the extension layer gives to methods. Workers start on the first
// job that needs them (loading a model starts no thread), spin briefly between jobs (an LLM's
// decode step runs hundreds of short parallel kernels) and then sleep.
//
// Handing a job over costs what the cores pay to move cache lines between them (80 ns here
// between cores that share a cache, 400 ns between ones that do not), so the hand-off takes
// no lock and touches few lines: a worker reads the job from one line, claims tasks on a
// second and reports them done on a third. A worker that had to wait for a mutex the caller
// held would sleep in the kernel and wake after the caller had run every task itself.
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
  // Claims and runs tasks of job `job` (n tasks of fn) until none is left or the job is over;
  // returns how many it ran.
  size_t drain(uint64_t job, size_t n, void (*fn)(void*, size_t), void* arg);
  void start_workers();

  // A task claim: the job's number in the high bits, the tasks not yet claimed in the low
  // ones. A worker claims with a compare-and-swap, so it can take a task only of the job it
  // read, and only while that job is unfinished: the fields it read are still that job's.
  static constexpr int kCountBits = 24;
  static constexpr size_t kMaxTasks = (size_t(1) << kCountBits) - 1;  // per job; run() splits more

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  struct alignas(64) Job {  // written by run() (while no task of the last job is unclaimed)
    std::atomic<uint64_t> number{0};
    std::atomic<size_t> n{0};
    std::atomic<void (*)(void*, size_t)> fn{nullptr};
    std::atomic<void*> arg{nullptr};
  } job_;
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<uint64_t> worker_done_{0};  // tasks run by workers, all jobs
  uint64_t worker_done_seen_ = 0;                     // run()'s count of them
  alignas(64) std::atomic<int> sleepers_{0};          // workers blocked on wake_
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // for wake_ only
  std::condition_variable wake_;
};

// The default thread count: the performance cores (on Linux, the cores with the highest
// maximum frequency; elsewhere all of them), at least 1.
int default_num_threads();

}  // namespace pocket
