// The bytes of a .pocket file held in memory: mapped, read, or copied from a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pocket/error.h"

namespace pocket {

class FileData {
 public:
  enum class Mode { Mmap, Read };

  // Maps or reads `path`. On failure returns the error and sets *message.
  static Error open(const std::string& path, Mode mode, std::unique_ptr<FileData>* out,
                    std::string* message);
  // Maps or reads the `length` bytes of the open file `fd` (borrowed for the call) that start
  // at `offset`, e.g. a .pocket stored uncompressed inside an APK or zip. Mmap maps in place
  // when the offset is kDataAlignment-aligned (from the page boundary below it) and falls back
  // to reading otherwise. `name` names the region in messages. A region beyond the end of the
  // file fails with OutOfRange.
  static Error open_fd(int fd, uint64_t offset, uint64_t length, Mode mode, const std::string& name,
                       std::unique_ptr<FileData>* out, std::string* message);
  // Copies `size` bytes into aligned memory.
  static Error copy(const void* data, size_t size, std::unique_ptr<FileData>* out,
                    std::string* message);
  ~FileData();

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // True when the bytes are mapped from the file (no copy), false when read or copied.
  bool mapped() const { return map_base_ != nullptr; }

 private:
  FileData() = default;
  uint8_t* data_ = nullptr;  // inside the mapping, or malloc'ed when not mapped
  uint64_t size_ = 0;
  void* map_base_ = nullptr;  // page-aligned start of the mapping (at or before data_)
  size_t map_size_ = 0;
};

}  // namespace pocket
