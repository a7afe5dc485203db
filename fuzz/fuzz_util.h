// Helpers shared by the fuzz targets: a memory budget, aligned copies of the input, and
// check(), which turns a broken invariant into a crash libFuzzer records.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "heap_allocator.h"

namespace pocket_fuzz {

// A wrong result or a message-less failure is as much a finding as a sanitizer report.
inline void check(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s %s\n", what, detail.c_str());
  std::abort();
}

// What one input may make the runtime allocate: the runtime's own memory budget (the one a
// Module enforces, refused before allocating), set low so a fuzzed file cannot declare its way
// to an out-of-memory kill of the fuzzer.
constexpr uint64_t kMemoryLimit = uint64_t(64) << 20;

// A 64-byte aligned copy of the input (Program::load wants aligned data, as an mmap gives).
struct AlignedCopy {
  AlignedCopy(const uint8_t* data, size_t size) : size(size) {
    bytes.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64)));
    if (size) std::memcpy(bytes.get(), data, size);
  }
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> bytes;
  size_t size;
};

// Reads a file of the source tree the targets use as fixed context (a tokenizer, a model).
inline std::string read_fixture(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  check(f != nullptr, "cannot open fixture", path);
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  std::fclose(f);
  return bytes;
}

}  // namespace pocket_fuzz
