// Helpers shared by the portable kernels: argument checks, broadcasting, strided iteration,
// dtype dispatch and element loads/stores across dtypes. Nothing here allocates.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pocket/kernel.h"

// Put before a loop with a small constant trip count (a register tile's rows, columns and
// vectors; a pixel's channels): GCC 12 otherwise keeps such arrays of vectors in memory at
// -O3, and at -O2 / -Os leaves the loop rolled.
#if defined(__clang__)
#define POCKET_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define POCKET_UNROLL _Pragma("GCC unroll 16")
#else
#define POCKET_UNROLL
#endif

namespace pocket {
namespace detail {

// v, its value hidden from the optimizer. A loop that reaches many addresses from its counter
// (a dozen bases plus v) then computes them from v each time round, instead of stepping a
// pointer per address: GCC 12 keeps such pointers on the stack once the registers run out
// and adds to each in memory every iteration (the int8 depthwise row, 2% of an int8
// MobileNetV2).
template <typename T>
inline T opaque(T v) {
#if defined(__GNUC__)
  asm("" : "+r"(v));
#endif
  return v;
}

// Calls f(T{}) with T the C++ type of `t`, for the dtypes kernels compute in.
// Returns Unsupported (with a message naming `op`) for others.
template <typename F>
Error dispatch_dtype(KernelContext& ctx, const char* op, ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float32: f(float{}); return Error::Ok;
    case ScalarType::Float64: f(double{}); return Error::Ok;
    case ScalarType::Int64: f(int64_t{}); return Error::Ok;
    case ScalarType::Int32: f(int32_t{}); return Error::Ok;
    case ScalarType::Int16: f(int16_t{}); return Error::Ok;
    case ScalarType::Int8: f(int8_t{}); return Error::Ok;
    case ScalarType::UInt8: f(uint8_t{}); return Error::Ok;
    case ScalarType::Bool: f(bool{}); return Error::Ok;
    default:
      return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported", op, scalar_type_name(t));
  }
}

// Same, floating dtypes only.
template <typename F>
Error dispatch_float(KernelContext& ctx, const char* op, ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float32: f(float{}); return Error::Ok;
    case ScalarType::Float64: f(double{}); return Error::Ok;
    default:
      return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported (float32 or float64 expected)",
                      op, scalar_type_name(t));
  }
}

// Element i of `p` (dtype t) converted to T by static_cast (bool: nonzero is true). i is a
// flat element index into contiguous or strided memory. Float16, BFloat16 and other dtypes
// read as 0: callers check the dtype first (shape_util's load_double reads float16 too).
template <typename T>
inline T load_as(const void* p, ScalarType t, int64_t i) {
  switch (t) {
    case ScalarType::Float32: return static_cast<T>(static_cast<const float*>(p)[i]);
    case ScalarType::Float64: return static_cast<T>(static_cast<const double*>(p)[i]);
    case ScalarType::Int64: return static_cast<T>(static_cast<const int64_t*>(p)[i]);
    case ScalarType::Int32: return static_cast<T>(static_cast<const int32_t*>(p)[i]);
    case ScalarType::Int16: return static_cast<T>(static_cast<const int16_t*>(p)[i]);
    case ScalarType::Int8: return static_cast<T>(static_cast<const int8_t*>(p)[i]);
    case ScalarType::UInt8: return static_cast<T>(static_cast<const uint8_t*>(p)[i]);
    case ScalarType::Bool: return static_cast<T>(static_cast<const bool*>(p)[i]);
    default: return T(0);
  }
}

// Stores v as element i of `p` (dtype t), converted by static_cast (bool: nonzero is true).
// Float16, BFloat16 and other dtypes are left unwritten, as load_as reads them as 0.
template <typename T>
inline void store_as(void* p, ScalarType t, int64_t i, T v) {
  switch (t) {
    case ScalarType::Float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case ScalarType::Float64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case ScalarType::Int64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case ScalarType::Int32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case ScalarType::Int16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
    case ScalarType::Int8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case ScalarType::UInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case ScalarType::Bool: static_cast<bool*>(p)[i] = static_cast<bool>(v); break;
    default: break;
  }
}

// A Scalar argument (Int, Double or Bool value) converted to T.
template <typename T>
inline T scalar_as(const Value& v) {
  if (v.tag == Value::Tag::Int) return static_cast<T>(v.i);
  if (v.tag == Value::Tag::Bool) return static_cast<T>(v.b);
  return static_cast<T>(v.d);
}

// Whether v is NaN; false for integer and bool types.
template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Normalizes a possibly negative dim against `dim` dims; fails with a message naming `op`.
inline Error normalize_dim(KernelContext& ctx, const char* op, int64_t d, int dim, int* out) {
  int64_t n = dim == 0 ? 1 : dim;  // a 0-d tensor accepts dim 0 and -1
  if (d < -n || d >= n)
    return ctx.fail(Error::OutOfRange, "%s: dim %lld out of range for a %d-d tensor", op,
                    static_cast<long long>(d), dim);
  *out = static_cast<int>(d < 0 ? d + n : d);
  return Error::Ok;
}

// Resizes an output, failing with a message naming `op` when it exceeds planned memory.
inline Error resize_output(KernelContext& ctx, const char* op, Tensor& out, const int64_t* sizes,
                           int dim) {
  Error e = out.resize(sizes, dim);
  if (e == Error::Ok) return e;
  char buf[128];
  return ctx.fail(e, "%s: output shape %s does not fit its planned %zu bytes", op,
                  shape_string(sizes, dim, buf, sizeof buf), out.capacity);
}

inline Error expect_dtype(KernelContext& ctx, const char* op, const char* arg, const Tensor& t,
                          ScalarType want) {
  if (t.dtype == want) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: %s has dtype %s, expected %s", op, arg,
                  scalar_type_name(t.dtype), scalar_type_name(want));
}

// Broadcasts the shapes of `n` tensors (numpy rules) into out_sizes/out_dim.
Error broadcast_shapes(KernelContext& ctx, const char* op, const Tensor* const* ts, int n,
                       int64_t* out_sizes, int* out_dim);

// Strides of `t` viewed with `dim` dims of `sizes` (right-aligned), 0 on broadcast dims.
void broadcast_strides(const Tensor& t, const int64_t* sizes, int dim, int64_t* strides);

// Visits rows [r0, r1) of a `dim`-d index space of `sizes` (a row: the last dim; a 0-d space
// is one row of one element) in row-major order, calling row(offsets) with offsets[k] = the
// element offset into input k (strides[k] in elements) of the row's first element.
template <int N, typename F>
void for_each_row(const int64_t* sizes, int dim, const int64_t (*strides)[kMaxDim], int64_t r0, int64_t r1,
                  F&& row) {
  for (int d = 0; d < dim; ++d)
    if (sizes[d] == 0) return;
  if (r0 >= r1) return;
  int64_t idx[kMaxDim] = {0};
  int64_t off[N] = {0};
  for (int64_t d = dim - 2, r = r0; d >= 0; --d) {  // the index of row r0
    idx[d] = r % sizes[d];
    r /= sizes[d];
    for (int k = 0; k < N; ++k) off[k] += idx[d] * strides[k][d];
  }
  for (int64_t rows = r1 - r0; rows > 0; --rows) {
    row(static_cast<const int64_t*>(off));
    for (int d = dim - 2; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < sizes[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= strides[k][d] * sizes[d];
      idx[d] = 0;
    }
  }
}

// Visits the elements of rows [r0, r1) (as for_each_row) in row-major order, calling
// f(offsets) with offsets[k] = element offset into input k.
template <int N, typename F>
void for_each_offset_rows(const int64_t* sizes, int dim, const int64_t (*strides)[kMaxDim], int64_t r0, int64_t r1,
                          F&& f) {
  const int64_t inner = dim == 0 ? 1 : sizes[dim - 1];
  int64_t inner_stride[N];
  for (int k = 0; k < N; ++k) inner_stride[k] = dim == 0 ? 0 : strides[k][dim - 1];
  for_each_row<N>(sizes, dim, strides, r0, r1, [&](const int64_t* off) {
    int64_t o[N];
    for (int k = 0; k < N; ++k) o[k] = off[k];
    for (int64_t i = 0; i < inner; ++i) {
      f(static_cast<const int64_t*>(o));
      for (int k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
  });
}

// Rows of a `dim`-d index space of `sizes`, for for_each_offset_rows.
inline int64_t row_count(const int64_t* sizes, int dim) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < dim; ++d) rows *= sizes[d];
  return dim > 0 && sizes[dim - 1] == 0 ? 0 : rows;
}

// Visits every element of a `dim`-d index space of `sizes` in row-major order (as
// for_each_offset_rows).
template <int N, typename F>
void for_each_offset(const int64_t* sizes, int dim, const int64_t (*strides)[kMaxDim], F&& f) {
  for_each_offset_rows<N>(sizes, dim, strides, 0, row_count(sizes, dim), f);
}

}  // namespace detail
}  // namespace pocket
