#include "file_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pocket {

static uint8_t* aligned_alloc_bytes(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size == 0 ? 64 : size) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

Error FileData::open(const std::string& path, Mode mode, std::unique_ptr<FileData>* out,
                     std::string* message) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    *message = "cannot open '" + path + "': " + strerror(err);
    return err == ENOENT ? Error::NotFound : Error::Io;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *message = "'" + path + "' is not a regular file";
    ::close(fd);
    return Error::Io;
  }
  std::unique_ptr<FileData> data(new FileData());
  data->size_ = static_cast<uint64_t>(st.st_size);
  if (mode == Mode::Mmap && st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      data->data_ = static_cast<uint8_t*>(p);
      data->mapped_ = true;
    }
  }
  if (data->data_ == nullptr) {  // Read mode, an empty file, or mmap refused.
    data->data_ = aligned_alloc_bytes(static_cast<size_t>(st.st_size));
    if (data->data_ == nullptr) {
      *message = "out of memory reading '" + path + "'";
      ::close(fd);
      return Error::OutOfMemory;
    }
    size_t done = 0;
    while (done < static_cast<size_t>(st.st_size)) {
      ssize_t n = ::read(fd, data->data_ + done, static_cast<size_t>(st.st_size) - done);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        *message = "error reading '" + path + "'";
        ::close(fd);
        return Error::Io;
      }
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  *out = std::move(data);
  return Error::Ok;
}

Error FileData::copy(const void* bytes, size_t size, std::unique_ptr<FileData>* out,
                     std::string* message) {
  if (bytes == nullptr && size != 0) {
    *message = "program buffer is NULL";
    return Error::InvalidArgument;
  }
  std::unique_ptr<FileData> data(new FileData());
  data->data_ = aligned_alloc_bytes(size);
  if (data->data_ == nullptr) {
    *message = "out of memory copying the program buffer";
    return Error::OutOfMemory;
  }
  if (size) memcpy(data->data_, bytes, size);
  data->size_ = size;
  *out = std::move(data);
  return Error::Ok;
}

FileData::~FileData() {
  if (mapped_) {
    munmap(data_, static_cast<size_t>(size_));
  } else {
    free(data_);
  }
}

}  // namespace pocket
