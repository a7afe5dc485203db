// Checks for the C++ tests of the extension layer (scratch_arena_test, thread_pool_test):
// CHECK(cond) counts a pass, or prints the failed condition with its file and line; report()
// prints the totals and gives main's exit code.
#pragma once

#include <cstdio>

namespace pocket_test {

inline int passed = 0, failed = 0;

inline void check(bool ok, const char* file, int line, const char* what) {
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  std::fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
}

inline int report(const char* test) {
  std::printf("%s: %d checks passed, %d failed\n", test, passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace pocket_test

#define CHECK(cond) pocket_test::check((cond), __FILE__, __LINE__, #cond)
