// Program: a verified view of a .pocket file held in memory (a buffer, an mmap, a read file).
//
// Program does not own the bytes; they must stay alive and unchanged while the Program and
// the Methods loaded from it are used. load() runs the flatbuffers Verifier and checks every
// segment, buffer and metadata entry, so later code can trust the file's structure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocket/error.h"
#include "pocket/kernel.h"
#include "pocket/span.h"
#include "pocket/tensor.h"

namespace pocket {

constexpr char kMagic[8] = {'P', 'O', 'C', 'K', 'E', 'T', 'P', 'G'};
constexpr uint32_t kHeaderSize = 32;
constexpr uint32_t kMinFormatVersion = 1;  // see schema/COMPATIBILITY.md
constexpr uint32_t kMaxFormatVersion = 2;
constexpr size_t kDataAlignment = 16;      // `data` passed to load() must be this aligned

class Program {
 public:
  // Verifies `size` bytes at `data` (borrowed, 16-byte aligned) and fills `out`.
  // On failure `out` is untouched and `diag` names the problem.
  static Error load(const uint8_t* data, uint64_t size, Program* out, Diag& diag);

  uint32_t version() const { return version_; }

  size_t num_methods() const;
  const char* method_name(size_t i) const;
  // Index of the method called `name`, or -1.
  int find_method(const char* name) const;

  size_t num_metadata() const;
  const char* metadata_key(size_t i) const;
  const char* metadata_value(size_t i) const;
  // Value for `key`, or nullptr.
  const char* metadata(const char* key) const;

  // Raw bytes of segment `i` (checked to lie inside the file at load time).
  Span<const uint8_t> segment(size_t i) const;
  size_t num_segments() const;

  // Program-level mutable buffers (e.g. a KV cache), shared by all methods.
  size_t num_buffers() const;
  const char* buffer_name(size_t i) const;
  size_t buffer_nbytes(size_t i) const;
  // Writes the initial value (or zeros) of buffer `i` into `dst` (buffer_nbytes(i) bytes).
  void init_buffer(size_t i, void* dst) const;

  // Checks that `kernels` has every op of every method, without loading any method: a runtime
  // built for other programs (a selective build) refuses the file at load, naming the op.
  Error check_ops(Span<const KernelEntry> kernels, Diag& diag) const;

  // The embedded tokenizer's bytes; empty when the file has none.
  Span<const uint8_t> tokenizer() const;

  // Internal: the verified flatbuffer root (a const pocket::fb::Program*).
  const void* root() const { return root_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  const uint8_t* segment_base_ = nullptr;
  const void* root_ = nullptr;
  uint32_t version_ = 0;
};

}  // namespace pocket
