// WorkerPool (extension/thread_pool.h): every task of every job runs exactly once, with its own
// job's function and argument, while jobs follow each other with no pause (workers still
// leaving the last job), after pauses long enough for the workers to sleep, and past the
// tasks one job can hold. Also run under ThreadSanitizer (the tsan preset).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../extension/thread_pool.h"
#include "cpp_check.h"

namespace {

// A job: counts[i] += weight for each task i; tasks of another job would add its weight.
struct Job {
  std::vector<std::atomic<int>> counts;
  int weight;
  Job(size_t n, int w) : counts(n), weight(w) {}
};

void add(void* arg, size_t i) {
  Job* j = static_cast<Job*>(arg);
  j->counts[i].fetch_add(j->weight, std::memory_order_relaxed);
}

// The same, through a second function: a task run with the wrong job's function adds 1000.
void add_other(void* arg, size_t i) {
  Job* j = static_cast<Job*>(arg);
  j->counts[i].fetch_add(j->weight * 1000, std::memory_order_relaxed);
}

// A task of about 1 ms that counts the tasks run off the calling thread.
struct SlowJob {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_workers{0};
};

void slow(void* arg, size_t) {
  SlowJob* j = static_cast<SlowJob*>(arg);
  if (std::this_thread::get_id() != j->caller) j->on_workers.fetch_add(1);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
  while (std::chrono::steady_clock::now() < until) {
  }
}

bool ran_once(const Job& j, int per_task) {
  for (const auto& c : j.counts)
    if (c.load() != per_task) return false;
  return true;
}

}  // namespace

int main() {
  using pocket::WorkerPool;
  for (int threads : {1, 2, 3, 4}) {
    WorkerPool pool(threads);
    CHECK(pool.num_threads() == threads);
    // Back to back: two jobs with their own functions alternate, sizes 0..40.
    bool all_once = true;
    for (int round = 0; round < 10000; ++round) {
      const size_t n = static_cast<size_t>(round % 41);
      Job a(n, 1), b(n, 2);
      pool.run(n, add, &a);
      pool.run(n, add_other, &b);
      all_once = all_once && ran_once(a, 1) && ran_once(b, 2000);
    }
    CHECK(all_once);
    // With pauses: the workers go to sleep (after 200 us of spinning) and must wake. A worker
    // that missed its wake-up would leave all 8 tasks of 1 ms to the caller, every round.
    bool right = true;
    int on_workers = 0;
    for (int round = 0; round < 5; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      Job j(7, 3);
      pool.run(7, add, &j);
      right = right && ran_once(j, 3);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      SlowJob s;
      pool.run(8, slow, &s);
      on_workers += s.on_workers.load();
    }
    CHECK(right);
    CHECK(threads == 1 ? on_workers == 0 : on_workers > 0);
  }
  {
    // More tasks than one job holds (2^24 - 1): run() splits them into jobs.
    WorkerPool pool(2);
    const size_t n = (size_t(1) << 24) + 5;
    Job j(n, 1);
    pool.run(n, add, &j);
    CHECK(ran_once(j, 1));
  }
  {
    // Destroyed while its workers sleep, and right after a job.
    WorkerPool sleeping(3);
    Job j(5, 1);
    sleeping.run(5, add, &j);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    WorkerPool busy(3);
    busy.run(5, add, &j);
    CHECK(ran_once(j, 2));
  }
  return pocket_test::report("thread_pool_test");
}
