// Helpers for the shape, copy and creation kernels: views described by sizes and strides,
// strided copies into planned outputs, and the argument checks they share (dtype, size
// lists, slice and select). Element conversion is in convert.h, index tensors in
// index_util.h. Nothing here allocates.
//
// Pocket ops are out of place: a view-like ATen op (permute, slice, expand, ...) builds a
// view header over its input (same memory, new sizes/strides/offset) and copies that view
// into its contiguous planned output.
#pragma once

#include <cstring>

#include "util.h"

namespace pocket {
namespace detail {

// ---- aten::permute (op_permute.cpp)

// A batch item's (rows, cols) -> (cols, rows) transpose of 4-byte elements for columns
// [c0, c1): d[c * rows + r] = s[r * cols + c] (the channel interleave of NCHW -> NHWC).
using InterleaveFn = void (*)(const uint32_t* s, uint32_t* d, int64_t cols, int64_t c0, int64_t c1);
// One 8x8 block of such a transpose: d[c * d_stride + r] = s[r * s_stride + c] for r, c < 8.
using Transpose8Fn = void (*)(const uint32_t* s, int64_t s_stride, uint32_t* d, int64_t d_stride);

// op_permute, its 3-row interleave (an RGB image's) done by `three` and the whole 8x8 blocks of
// its channel transposes by `block8` when not null: the optimized kernels' vector versions
// (optimized/nn.cpp).
Error permute_interleaving(KernelContext& ctx, Value** args, InterleaveFn three, Transpose8Fn block8 = nullptr);

// ---- views and copies

// Address of element `offset` (in elements, may be negative) of `t`'s memory.
inline char* element_ptr(const Tensor& t, int64_t offset) {
  return static_cast<char*>(t.data) + offset * static_cast<int64_t>(element_size(t.dtype));
}

// A header viewing `t`'s memory from element `offset`, with `dim` sizes and strides
// (contiguous strides when `strides` is null). Views are read or written, never resized.
Tensor make_view(const Tensor& t, int64_t offset, const int64_t* sizes, const int64_t* strides,
                 int dim);

// Copies `src` into `dst` element by element: equal sizes and element sizes, any strides
// (0 on broadcast dims, negative on flipped ones). The regions must not overlap.
void copy_elements(const Tensor& dst, const Tensor& src);

// Same, converting between any two dtypes (see store_double for float -> int).
void convert_elements(const Tensor& dst, const Tensor& src);

// dst += src elementwise, both of the same dtype (bool: logical or).
void accumulate_elements(const Tensor& dst, const Tensor& src);

// Resizes `out` to `sizes` and copies the elements of `view` into it in row-major order;
// `view` must hold as many elements as `sizes` describes and have out's dtype.
Error copy_to_output(KernelContext& ctx, const char* op, const Tensor& view, Tensor& out,
                     const int64_t* sizes, int dim);

// The *_scatter kernels: copies `src` into `view` (the part of their output that src
// replaces, of src's dtype); fails unless src has view's shape.
Error copy_into_view(KernelContext& ctx, const char* op, const Tensor& view, const Tensor& src);

// A view of `t` broadcast (numpy rules, leading size-1 dims of `t` dropped) to `sizes`.
Error broadcast_view(KernelContext& ctx, const char* op, const char* what, const Tensor& t,
                     const int64_t* sizes, int dim, Tensor* view);

// Copies one element of `size` bytes.
inline void copy_element(char* dst, const char* src, size_t size) {
  switch (size) {
    case 1: *dst = *src; break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memmove(dst, src, size); break;
  }
}

// ---- argument checks

Error expect_same_dtype(KernelContext& ctx, const char* op, const Tensor& in, const Tensor& out);

// Checks a `ScalarType? dtype` argument against the output. None means `like`'s dtype for
// the *_like and copy ops, and "whatever the output is" when `like` is null (full, arange).
Error check_dtype_arg(KernelContext& ctx, const char* op, const Value& dtype, const Tensor* like,
                      const Tensor& out);

// Fails unless `t` has at least one dim (slice, select, split, ... of a 0-d tensor).
Error expect_not_scalar(KernelContext& ctx, const char* op, const Tensor& t);

// Reads a size list (all >= 0) into sizes/dim.
Error read_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t* sizes, int* dim);

// Reads a view/reshape size list for `numel` elements; one entry may be -1.
Error infer_view_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t numel,
                       int64_t* sizes, int* dim);

// The view and _unsafe_view kernels.
Error view_to_output(KernelContext& ctx, const char* op, const Tensor& self, const IntList& size,
                     Tensor& out);

// View of self[dim, start:end:step] (torch's clamping; None start/end mean the full range).
Error slice_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                 const Value& start, const Value& end, int64_t step, Tensor* view);

// View of self.select(dim, index).
Error select_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                  int64_t index, Tensor* view);

}  // namespace detail
}  // namespace pocket
