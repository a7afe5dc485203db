// Helpers for the shape, copy, indexing and creation kernels: views described by sizes and
// strides, strided copies into planned outputs, dtype conversion (float16 and bfloat16
// included), scalar encoding, index reading and advanced-index planning. Nothing here
// allocates.
//
// Pocket ops are out of place: a view-like ATen op (permute, slice, expand, ...) builds a
// view header over its input (same memory, new sizes/strides/offset) and copies that view
// into its contiguous planned output.
#pragma once

#include <cstring>

#include "util.h"

namespace pocket {
namespace detail {

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

// ---- dtype conversion

bool is_integral(ScalarType t);  // the int types and bool
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
inline float bfloat16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t float_to_bfloat16(float f);  // round to nearest even

// Element i of p (dtype t) as a double (floating dtypes) or int64 (integral dtypes).
double load_double(const void* p, ScalarType t, int64_t i);
int64_t load_int64(const void* p, ScalarType t, int64_t i);
// Stores v as element i. Floating to integral truncates toward zero to int64 (saturating,
// NaN -> 0) and then wraps to the target width, which is what torch does on x86 for
// values in int64 range; float16/bfloat16 round to nearest even.
void store_double(void* p, ScalarType t, int64_t i, double v);
void store_int64(void* p, ScalarType t, int64_t i, int64_t v);

// Encodes a Scalar argument as one element of dtype t (element_size(t) bytes at `element`);
// fails like torch when the value does not fit ("value cannot be converted ...").
Error scalar_to_element(KernelContext& ctx, const char* op, const Value& s, ScalarType t,
                        void* element);

// Writes `element` into every element of the contiguous tensor `out`.
void fill_elements(const Tensor& out, const void* element);

// ---- index tensors

Error expect_index_tensor(KernelContext& ctx, const char* op, const Tensor& index);

inline int64_t load_index(const Tensor& index, int64_t offset) {
  if (index.dtype == ScalarType::Int32) return index.data_as<int32_t>()[offset];
  return index.data_as<int64_t>()[offset];
}

// Wraps a possibly negative index into [0, size) or fails naming op, dim and size. Ops
// whose ATen kernels reject negative indices (index_select, gather, scatter) pass
// negative_ok = false.
inline Error wrap_index(KernelContext& ctx, const char* op, int64_t v, int dim, int64_t size,
                        int64_t* out, bool negative_ok = true) {
  if (v < (negative_ok ? -size : 0) || v >= size)
    return ctx.fail(Error::OutOfRange, "%s: index %lld is out of bounds for dim %d with size %lld",
                    op, static_cast<long long>(v), dim, static_cast<long long>(size));
  *out = v < 0 ? v + size : v;
  return Error::Ok;
}

// ---- advanced indexing: self[indices] for index.Tensor and index_put
//
// The index tensors (non-None entries) broadcast to a shape B. When the indexed dims are
// adjacent the result is [dims before them] + B + [dims after them]; otherwise it is
// B + [all non-indexed dims] (numpy's rule).
struct IndexPlan {
  int count = 0;                                  // index tensors
  const Tensor* index[kMaxDim] = {};
  int indexed_dim[kMaxDim] = {};                  // the self dim each one indexes
  int64_t index_strides[kMaxDim][kMaxDim] = {};   // each index tensor's strides over B
  int64_t bsizes[kMaxDim] = {};
  int bdim = 0;
  int pre[kMaxDim] = {};                          // self dims before B in the result
  int npre = 0;
  int post[kMaxDim] = {};                         // self dims after B in the result
  int npost = 0;
  int64_t result_sizes[kMaxDim] = {};
  int result_dim = 0;
};

Error plan_index(KernelContext& ctx, const char* op, const Tensor& self, const TensorList& indices,
                 IndexPlan* plan);

// Calls f(target_offset, result_position) for each position of the pre dims and B, in
// result order: target_offset is the element offset in `target` (self's sizes, any strides)
// of the block spanned by the post dims, result_position the flat result index of its first
// element. Fails on an out-of-bounds index.
template <typename F>
Error walk_index(KernelContext& ctx, const char* op, const IndexPlan& plan, const Tensor& target,
                 F&& f) {
  int64_t pre_sizes[kMaxDim];
  int64_t pre_strides[1][kMaxDim];
  for (int i = 0; i < plan.npre; ++i) {
    pre_sizes[i] = target.sizes[plan.pre[i]];
    pre_strides[0][i] = target.strides[plan.pre[i]];
  }
  int64_t block = 1;
  for (int i = 0; i < plan.npost; ++i) block *= target.sizes[plan.post[i]];
  int64_t pos = 0;
  Error err = Error::Ok;
  for_each_offset<1>(pre_sizes, plan.npre, pre_strides, [&](const int64_t* po) {
    for_each_offset<kMaxDim>(plan.bsizes, plan.bdim, plan.index_strides, [&](const int64_t* io) {
      if (err != Error::Ok) return;
      int64_t offset = po[0];
      for (int c = 0; c < plan.count; ++c) {
        int d = plan.indexed_dim[c];
        int64_t v = 0;
        err = wrap_index(ctx, op, load_index(*plan.index[c], io[c]), d, target.sizes[d], &v);
        if (err != Error::Ok) return;
        offset += v * target.strides[d];
      }
      f(offset, pos);
      pos += block;
    });
  });
  return err;
}

}  // namespace detail
}  // namespace pocket
