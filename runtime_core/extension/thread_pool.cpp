#include "thread_pool.h"

#include <algorithm>
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
  stopping_.store(true);
  job_.number.fetch_add(1);  // wakes the workers; they see stopping_
  { std::lock_guard<std::mutex> lock(mutex_); }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

size_t WorkerPool::drain(uint64_t job, size_t n, void (*fn)(void*, size_t), void* arg) {
  const uint64_t tag = job << kCountBits;
  size_t ran = 0;
  uint64_t claim = claim_.load(std::memory_order_relaxed);
  while ((claim & ~uint64_t(kMaxTasks)) == tag && (claim & kMaxTasks) != 0) {
    if (!claim_.compare_exchange_weak(claim, claim - 1, std::memory_order_relaxed)) continue;
    fn(arg, n - (claim & kMaxTasks));
    ++ran;
    claim = claim_.load(std::memory_order_relaxed);
  }
  return ran;
}

void WorkerPool::run(size_t n, void (*fn)(void*, size_t), void* arg) {
  if (n > 1 && workers_.empty() && num_threads_ > 1) start_workers();
  if (workers_.empty() || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(arg, i);
    return;
  }
  if (n > kMaxTasks) {  // in batches, each a job of its own
    struct Batch {
      void (*fn)(void*, size_t);
      void* arg;
      size_t base;
    } b{fn, arg, 0};
    for (; b.base < n; b.base += kMaxTasks)
      run(std::min(kMaxTasks, n - b.base), [](void* p, size_t i) {
        const Batch& b = *static_cast<const Batch*>(p);
        b.fn(b.arg, b.base + i);
      }, &b);
    return;
  }
  // Every task of the last job has finished (below), so no worker can claim one any more.
  // The caller keeps task 0 for itself.
  const uint64_t job = job_.number.load(std::memory_order_relaxed) + 1;  // only run() and ~ write it
  job_.n.store(n, std::memory_order_relaxed);
  job_.fn.store(fn, std::memory_order_relaxed);
  job_.arg.store(arg, std::memory_order_relaxed);
  claim_.store(job << kCountBits | (n - 1), std::memory_order_relaxed);
  job_.number.store(job);  // publishes the fields (release)
  if (sleepers_.load() > 0) {
    // A sleeper counted itself under the mutex before testing job_.number: taking the mutex
    // here waits until it is inside wait(), so the notification cannot fall between the two.
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  fn(arg, 0);
  const size_t mine = 1 + drain(job, n, fn, arg);
  // The last tasks are running on workers: spin briefly, then give the core away (a worker may
  // have been preempted).
  const uint64_t want = worker_done_seen_ + (n - mine);
  const auto all_done = [&] { return worker_done_.load(std::memory_order_acquire) >= want; };
  if (!spin_until(all_done, std::chrono::microseconds(50)))
    while (!all_done()) std::this_thread::yield();
  worker_done_seen_ = want;
}

void WorkerPool::work_loop() {
  uint64_t seen = 0;
  while (true) {
    uint64_t job = 0;
    const auto published = [&] {
      job = job_.number.load(std::memory_order_acquire);
      return job != seen;
    };
    // Spin for a short while: the next job usually comes within microseconds. Then sleep.
    if (!spin_until(published, std::chrono::microseconds(200))) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, published);
      sleepers_.fetch_sub(1);
    }
    if (stopping_.load()) return;
    seen = job;
    // These may already be a later job's: drain() then claims nothing (see claim_).
    const size_t n = job_.n.load(std::memory_order_relaxed);
    void (*fn)(void*, size_t) = job_.fn.load(std::memory_order_relaxed);
    void* arg = job_.arg.load(std::memory_order_relaxed);
    const size_t ran = drain(job, n, fn, arg);
    if (ran != 0) worker_done_.fetch_add(ran, std::memory_order_release);
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
