// Helpers for the neural-network and reduction kernels: contiguous views of strided inputs
// (copied into temp memory) and the checks of conv/pool parameter lists. Nothing here
// touches the heap.
#pragma once

#include <cstdint>

#include "util.h"

namespace pocket {
namespace detail {

// Points *data at t's elements in row-major order: t's own memory when it is contiguous,
// else a copy in temp memory (valid until the kernel returns). T is t's C++ element type.
template <typename T>
Error contiguous_data(KernelContext& ctx, const char* op, const char* arg, const Tensor& t,
                      const T** data) {
  if (t.is_contiguous()) {
    *data = t.data_as<const T>();
    return Error::Ok;
  }
  size_t bytes = static_cast<size_t>(t.numel()) * sizeof(T);
  T* copy = static_cast<T*>(ctx.allocate_temp(bytes > 0 ? bytes : 1));
  if (copy == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for a contiguous copy of %s (%zu bytes)",
                    op, arg, bytes);
  int64_t strides[1][kMaxDim];
  for (int d = 0; d < t.dim; ++d) strides[0][d] = t.strides[d];
  const T* src = t.data_as<const T>();
  int64_t i = 0;
  for_each_offset<1>(t.sizes, t.dim, strides, [&](const int64_t* o) { copy[i++] = src[o[0]]; });
  *data = copy;
  return Error::Ok;
}

// Reads a conv/pool parameter list ("stride", "padding", ...) of 1 or n items into out[0..n),
// repeating a single item. Fails unless every item is in [min_value, 2^32].
Error expand_param(KernelContext& ctx, const char* op, const char* name, const IntList& list,
                   int n, int64_t min_value, int64_t* out);

// Fails unless `t` has shape [n] and dtype `dtype` (for weight/bias/statistics vectors).
Error expect_vector(KernelContext& ctx, const char* op, const char* arg, const Tensor& t,
                    int64_t n, ScalarType dtype);

// Fails unless `t` has dtype float32 or float64 and matches `out`'s dtype.
Error expect_float_io(KernelContext& ctx, const char* op, const Tensor& t, const Tensor& out);

// A 2d pooling window over the last two dims of a (c, h, w) or (n, c, h, w) input.
struct Pool2d {
  int64_t planes = 0;            // n * c
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t k[2] = {1, 1}, stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  int64_t out_sizes[4] = {0, 0, 0, 0};  // output shape, `dim` dims like the input
  int dim = 0;
};

// Reads kernel_size, stride (empty: the kernel size), padding and dilation (null: 1) as
// ATen's pooling ops do, checks them against `in` and computes the output extent (ceil_mode
// rounds up, but a window may not start inside the right/bottom padding).
Error plan_pool2d(KernelContext& ctx, const char* op, const Tensor& in, const IntList& kernel,
                  const IntList& stride, const IntList& padding, const IntList* dilation,
                  bool ceil_mode, Pool2d* p);

// The output of a 2d upsampling (N, C, H, W) -> (N, C, out_h, out_w) and, per spatial dim, the
// user's scale factor (0 when an output size was given), as ATen's upsample_*2d.vec read them:
// exactly one of output_size (IntList) and scale_factors (DoubleList) is given.
struct Upsample2d {
  int64_t n = 0, c = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  double scale_h = 0, scale_w = 0;
};
Error plan_upsample2d(KernelContext& ctx, const char* op, const Tensor& in, const Value& output_size,
                      const Value& scale_factors, Tensor& out, Upsample2d* p);

// Source index step for output index steps: 1/scale when the user gave a scale, else in/out
// (ATen's compute_scales_value), in the kernel's compute type.
template <typename T>
inline T upsample_step(double scale, int64_t in, int64_t out) {
  return scale > 0 ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
}

}  // namespace detail
}  // namespace pocket
