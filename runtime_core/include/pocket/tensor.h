// Tensor: a dtype, a shape with strides, and a pointer to memory the tensor does not own.
//
// Tensors in a loaded Method point into planned arenas, constant segments, mutable buffers
// or caller memory (inputs). `capacity` is the number of bytes available at `data`; a kernel
// changes a tensor's shape only through resize(), which refuses shapes that do not fit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocket/error.h"

namespace pocket {

// Same numbers as pocket.fb.ScalarType and pk_dtype.
enum class ScalarType : int8_t {
  Float32 = 0,
  Float16 = 1,
  BFloat16 = 2,
  Float64 = 3,
  Int8 = 4,
  UInt8 = 5,
  Int16 = 6,
  Int32 = 7,
  Int64 = 8,
  Bool = 9,
};
constexpr int kNumScalarTypes = 10;

// Bytes per element; 0 for an invalid value.
size_t element_size(ScalarType t);
const char* scalar_type_name(ScalarType t);
bool is_valid_scalar_type(int v);
inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float16 || t == ScalarType::BFloat16 ||
         t == ScalarType::Float64;
}

constexpr int kMaxDim = 8;

struct Tensor {
  ScalarType dtype = ScalarType::Float32;
  int32_t dim = 0;
  int64_t sizes[kMaxDim] = {0};
  int64_t strides[kMaxDim] = {0};  // in elements
  void* data = nullptr;
  size_t capacity = 0;  // bytes available at data

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < dim; ++i) n *= sizes[i];
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(dtype); }
  int64_t size(int d) const { return sizes[d < 0 ? d + dim : d]; }
  bool is_contiguous() const;

  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data);
  }

  // Sets contiguous strides for the current sizes.
  void set_contiguous_strides();

  // Sets a new contiguous shape. Fails (and leaves the tensor as it was) when the shape has
  // more than kMaxDim dims, a negative size, or needs more than `capacity` bytes.
  Error resize(const int64_t* new_sizes, int new_dim);
};

// Shapes from outside (a file's tensors and buffers, a C API caller's shape) are checked with
// check_shape: at most kMaxDim dims, each size in [0, kMaxDimSize], and the product of the sizes
// with empty dims counted as 1 (the "extent") at most kMaxExtent. The extent bounds every
// contiguous stride, so an empty dim cannot let the others grow until a stride overflows; it
// is checked by division, so the product never wraps.
constexpr int64_t kMaxDimSize = int64_t(1) << 40;
constexpr uint64_t kMaxExtent = uint64_t(1) << 44;

struct ShapeCheck {
  enum class Problem : uint8_t { None, TooManyDims, BadSize, TooLarge };
  Problem problem = Problem::None;
  uint32_t dim = 0;    // BadSize: the first dim whose size is negative or over kMaxDimSize
  uint64_t numel = 0;  // None: the number of elements
  bool ok() const { return problem == Problem::None; }
};

// Checks `dim` sizes (not read when dim > kMaxDim); the first problem found, dim by dim.
ShapeCheck check_shape(const int64_t* sizes, size_t dim);

// Writes "[2, 3, 4]" into buf (always NUL-terminated); for error messages.
const char* shape_string(const int64_t* sizes, int dim, char* buf, size_t buf_size);

}  // namespace pocket
