#include "file_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "pocket/program.h"

namespace pocket {

static uint8_t* aligned_alloc_bytes(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size == 0 ? 64 : size) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

static std::string u64(uint64_t v) { return std::to_string(static_cast<unsigned long long>(v)); }

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
  Error e = open_fd(fd, 0, static_cast<uint64_t>(st.st_size), mode, "'" + path + "'", out, message);
  ::close(fd);
  return e;
}

Error FileData::open_fd(int fd, uint64_t offset, uint64_t length, Mode mode, const std::string& name,
                        std::unique_ptr<FileData>* out, std::string* message) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    *message = name + ": not an open file descriptor";
    return Error::InvalidArgument;
  }
  if (!S_ISREG(st.st_mode)) {
    *message = name + ": not a regular file";
    return Error::Io;
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size || length > file_size - offset) {
    *message = name + ": bytes [" + u64(offset) + ", " + u64(offset) + " + " + u64(length) +
               ") lie beyond the end of the file (" + u64(file_size) + " bytes)";
    return Error::OutOfRange;
  }
  if (length > SIZE_MAX) {
    *message = name + ": " + u64(length) + " bytes do not fit in this process's address space";
    return Error::OutOfMemory;
  }
  std::unique_ptr<FileData> data(new FileData());
  data->size_ = length;
  // mmap maps whole pages, so the mapping starts at the page boundary below `offset`; the
  // program then sits offset % page bytes into it, which keeps its alignment only when
  // `offset` itself is aligned (a zip or APK aligns stored entries to 4 bytes by default).
  if (mode == Mode::Mmap && length > 0 && offset % kDataAlignment == 0) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t start = offset - offset % page;
    const size_t map_size = static_cast<size_t>(offset - start + length);
    void* p = mmap(nullptr, map_size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
    if (p != MAP_FAILED) {
      data->map_base_ = p;
      data->map_size_ = map_size;
      data->data_ = static_cast<uint8_t*>(p) + (offset - start);
    }
  }
  if (data->data_ == nullptr) {  // Read mode, an empty or misaligned region, or mmap refused.
    data->data_ = aligned_alloc_bytes(static_cast<size_t>(length));
    if (data->data_ == nullptr) {
      *message = "out of memory reading " + name;
      return Error::OutOfMemory;
    }
    size_t done = 0;
    while (done < length) {  // pread: the descriptor's file position is left alone
      ssize_t n = ::pread(fd, data->data_ + done, static_cast<size_t>(length) - done,
                          static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *message = "error reading " + name + (n < 0 ? std::string(": ") + strerror(errno) : "");
        return Error::Io;
      }
      done += static_cast<size_t>(n);
    }
  }
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
  if (map_base_ != nullptr) {
    munmap(map_base_, map_size_);
  } else {
    free(data_);
  }
}

}  // namespace pocket
