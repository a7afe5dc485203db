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
    // With pauses: the workers go to sleep (after 200 us of spinning) and must wake.
    bool woke = true;
    for (int round = 0; round < 5; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      Job j(7, 3);
      pool.run(7, add, &j);
      woke = woke && ran_once(j, 3);
    }
    CHECK(woke);
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
