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
  // Copies `size` bytes into aligned memory.
  static Error copy(const void* data, size_t size, std::unique_ptr<FileData>* out,
                    std::string* message);
  ~FileData();

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  FileData() = default;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace pocket
