#include "pocket/tensor.h"

#include <cstdio>

namespace pocket {

size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return 4;
    case ScalarType::Float16: return 2;
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float64: return 8;
    case ScalarType::Int8: return 1;
    case ScalarType::UInt8: return 1;
    case ScalarType::Int16: return 2;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Bool: return 1;
  }
  return 0;
}

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return "float32";
    case ScalarType::Float16: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Float64: return "float64";
    case ScalarType::Int8: return "int8";
    case ScalarType::UInt8: return "uint8";
    case ScalarType::Int16: return "int16";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Bool: return "bool";
  }
  return "unknown";
}

bool is_valid_scalar_type(int v) { return v >= 0 && v < kNumScalarTypes; }

// As in torch: size-1 dims may have any stride, and an empty tensor is contiguous.
bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int d = dim - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

void Tensor::set_contiguous_strides() {
  int64_t s = 1;
  for (int d = dim - 1; d >= 0; --d) {
    strides[d] = s;
    s *= sizes[d];
  }
}

Error Tensor::resize(const int64_t* new_sizes, int new_dim) {
  if (new_dim < 0 || new_dim > kMaxDim) return Error::OutOfRange;
  uint64_t n = 1, extent = 1;  // extent: empty dims count as 1, so the strides stay in range too
  for (int d = 0; d < new_dim; ++d) {
    if (new_sizes[d] < 0) return Error::InvalidArgument;
    const uint64_t u = new_sizes[d] > 1 ? static_cast<uint64_t>(new_sizes[d]) : 1;
    if (extent > (uint64_t(1) << 48) / u) return Error::OutOfRange;  // by division: never wraps
    extent *= u;
    n *= static_cast<uint64_t>(new_sizes[d]);
  }
  if (n * element_size(dtype) > capacity) return Error::OutOfRange;
  dim = new_dim;
  for (int d = 0; d < new_dim; ++d) sizes[d] = new_sizes[d];
  set_contiguous_strides();
  return Error::Ok;
}

ShapeCheck check_shape(const int64_t* sizes, size_t dim) {
  ShapeCheck c;
  if (dim > static_cast<size_t>(kMaxDim)) {
    c.problem = ShapeCheck::Problem::TooManyDims;
    return c;
  }
  uint64_t numel = 1, extent = 1;
  for (size_t d = 0; d < dim; ++d) {
    const int64_t s = sizes[d];
    if (s < 0 || s > kMaxDimSize) {
      c.problem = ShapeCheck::Problem::BadSize;
      c.dim = static_cast<uint32_t>(d);
      return c;
    }
    const uint64_t u = s > 1 ? static_cast<uint64_t>(s) : 1;
    if (extent > kMaxExtent / u) {
      c.problem = ShapeCheck::Problem::TooLarge;
      return c;
    }
    extent *= u;
    numel *= static_cast<uint64_t>(s);
  }
  c.numel = numel;
  return c;
}

const char* shape_string(const int64_t* sizes, int dim, char* buf, size_t buf_size) {
  if (buf_size == 0) return buf;
  size_t pos = 0;
  auto put = [&](const char* text) {
    int n = snprintf(buf + pos, buf_size - pos, "%s", text);
    if (n > 0) pos = pos + static_cast<size_t>(n) < buf_size ? pos + n : buf_size - 1;
  };
  put("[");
  for (int d = 0; d < dim; ++d) {
    char item[32];
    snprintf(item, sizeof item, d == 0 ? "%lld" : ", %lld", static_cast<long long>(sizes[d]));
    put(item);
  }
  put("]");
  return buf;
}

}  // namespace pocket
