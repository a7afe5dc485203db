#include "thread_pool.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace pocket {

namespace {

// One spin-wait step: tells the core this is a busy-wait (frees the sibling hyper-thread,
// saves power) without leaving user space. sched_yield() costs a system call per step, which
// on a VM delays the wake-up of a spinning thread by a microsecond or more.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() or `budget` has passed; true when done() came first.
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds budget) {
  const auto until = std::chrono::steady_clock::now() + budget;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace

WorkerPool::WorkerPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {}

void WorkerPool::start_workers() {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { work_loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

// Takes tasks of the current job until none is left.
void WorkerPool::drain(size_t n, void (*fn)(void*, size_t), void* arg) {
  for (size_t i = next_.fetch_add(1); i < n; i = next_.fetch_add(1)) {
    fn(arg, i);
    done_.fetch_add(1, std::memory_order_release);
  }
}

void WorkerPool::run(size_t n, void (*fn)(void*, size_t), void* arg) {
  if (n > 1 && workers_.empty() && num_threads_ > 1) start_workers();
  if (workers_.empty() || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(arg, i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A worker that woke late for the previous job may still be leaving its drain(): resetting
    // next_ under it would hand it a task of this job with the last job's function.
    while (in_job_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    n_ = n;
    fn_ = fn;
    arg_ = arg;
    next_ = 0;
    done_ = 0;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  drain(n, fn, arg);
  // The last tasks are running on workers: spin briefly, then give the core away (a worker may
  // have been preempted).
  const auto all_done = [&] { return done_.load(std::memory_order_acquire) >= n; };
  if (!spin_until(all_done, std::chrono::microseconds(50)))
    while (!all_done()) std::this_thread::yield();
}

void WorkerPool::work_loop() {
  uint64_t seen = 0;
  while (true) {
    // Spin for a short while: the next job usually comes within microseconds.
    spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; },
               std::chrono::microseconds(200));
    size_t n;
    void (*fn)(void*, size_t);
    void* arg;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (stopping_) return;
      n = n_;
      fn = fn_;
      arg = arg_;
      in_job_.fetch_add(1, std::memory_order_relaxed);
    }
    drain(n, fn, arg);
    in_job_.fetch_sub(1, std::memory_order_release);
  }
}

int default_num_threads() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) return 1;
#if defined(__linux__)
  // Big cores have the highest maximum frequency; little cores would slow every parallel op.
  long best = 0;
  int fastest = 0;
  for (int cpu = 0; cpu < n; ++cpu) {
    // stdio, not <fstream>: iostreams would link libstdc++'s locale machinery (~0.5 MB) into
    // the shipped library, which links the C++ runtime statically.
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu);
    FILE* f = fopen(path, "r");
    long khz = 0;
    const bool read = f != nullptr && fscanf(f, "%ld", &khz) == 1;
    if (f != nullptr) fclose(f);
    if (!read) return n;  // no cpufreq: count every core
    if (khz > best) {
      best = khz;
      fastest = 0;
    }
    if (khz == best) ++fastest;
  }
  return fastest > 0 ? fastest : n;
#else
  return n;
#endif
}

}  // namespace pocket
