// Reductions over a set of dims of a strided tensor, and iteration over the lines of a
// tensor along one dim (softmax, cumsum). Nothing here allocates.
//
// A ReducePlan splits the input's dims into kept dims (one output element per index) and
// reduced dims (the elements folded into that output). Adjacent dims that are contiguous
// with each other are merged, so a reduction over the last dims of a contiguous tensor runs
// one flat inner loop.
#pragma once

#include <cstdint>
#include <type_traits>

#include "nn_util.h"

namespace pocket {
namespace detail {

struct ReducePlan {
  int64_t out_sizes[kMaxDim];  // output shape, keepdim applied
  int out_dim = 0;
  int64_t kept_sizes[kMaxDim];
  int64_t kept_strides[1][kMaxDim];  // input strides of the kept dims
  int kept_dim = 0;
  int64_t red_sizes[kMaxDim];
  int64_t red_strides[1][kMaxDim];  // input strides of the reduced dims
  int red_dim = 0;
  int64_t red_numel = 1;  // input elements per output element
};

// Plans a reduction of `in` over `dims` (an IntList value, or None). None reduces every dim;
// so does an empty list when `empty_is_all` (ATen's sum/mean/amax/var), else an empty list
// reduces nothing (any.dims). Negative dims count from the end; a dim listed twice is an error.
Error plan_reduce(KernelContext& ctx, const char* op, const Tensor& in, const Value& dims,
                  bool keepdim, ReducePlan* plan, bool empty_is_all = true);

// Plans a reduction over the single dim `dim` (may be negative).
Error plan_reduce_dim(KernelContext& ctx, const char* op, const Tensor& in, int64_t dim,
                      bool keepdim, ReducePlan* plan);

// Plans a reduction over every dim; keepdim gives the output shape [1, 1, ...].
void plan_reduce_all(const Tensor& in, bool keepdim, ReducePlan* plan);

// Calls f(out_index, in_offset) for each output element, out_index in row-major order and
// in_offset the input offset (in elements) of its first reduced element.
template <typename F>
void for_each_output(const ReducePlan& p, F&& f) {
  int64_t i = 0;
  for_each_offset<1>(p.kept_sizes, p.kept_dim, p.kept_strides,
                     [&](const int64_t* o) { f(i++, o[0]); });
}

// Calls f(in_offset) for each element reduced into the output whose first element sits at
// `base`, in row-major order of the reduced dims (so a counter gives ATen's flat index).
template <typename F>
void for_each_reduced(const ReducePlan& p, int64_t base, F&& f) {
  for_each_offset<1>(p.red_sizes, p.red_dim, p.red_strides,
                     [&](const int64_t* o) { f(base + o[0]); });
}

// The dtype ATen gives sums and products: `dtype` when given (a Pocket dtype number or
// None), else int64 for integral and bool inputs, else the input dtype. Fails on a bad number.
Error sum_result_dtype(KernelContext& ctx, const char* op, const Tensor& in, const Value& dtype,
                       ScalarType* out);

// v converted to an accumulator type: double, or uint64 (integer sums and products wrap
// like ATen's int64 arithmetic; float inputs are truncated to int64 first, as a cast would).
template <typename A, typename T>
inline A to_acc(T v) {
  if constexpr (std::is_floating_point<A>::value)
    return static_cast<A>(v);
  else
    return static_cast<A>(static_cast<int64_t>(v));
}

// out[o] = sum (or mean when `mean`) of the reduced elements of `in`. Accumulates in double
// for floating outputs and in wrapping 64-bit integers for integral ones; `out` must already
// be resized.
Error reduce_sum(KernelContext& ctx, const char* op, const Tensor& in, const ReducePlan& plan,
                 Tensor& out, bool mean);

// Calls f(out_index, value, index) with the largest (want_max) or smallest element reduced
// into each output and its row-major index over the reduced dims. NaN counts as the extreme
// (ATen propagates it); ties keep the first. The plan must reduce at least one element.
template <typename T, typename F>
void for_each_extreme(const T* x, const ReducePlan& p, bool want_max, F&& f) {
  for_each_output(p, [&](int64_t o, int64_t base) {
    T best = x[base];
    int64_t best_i = 0, i = 0;
    bool found_nan = is_nan(best);
    for_each_reduced(p, base, [&](int64_t off) {
      T v = x[off];
      if (!found_nan && (is_nan(v) || (want_max ? v > best : v < best))) {
        best = v;
        best_i = i;
        found_nan = is_nan(v);
      }
      ++i;
    });
    f(o, best, best_i);
  });
}

// Fails when the plan folds no elements into an output (max/min of nothing).
Error expect_nonempty_reduction(KernelContext& ctx, const char* op, const ReducePlan& plan);

// One line of a tensor along a dim: `count` elements at in[in_base + k * in_stride] and
// out[out_base + k * out_stride].
struct Line {
  int64_t in_base, out_base;
  int64_t in_stride, out_stride;
  int64_t count;
};

// Calls f(line) for every line of `in` along `dim` (normalized), pairing it with the same
// line of `out` (same shape, contiguous).
template <typename F>
void for_each_line(const Tensor& in, const Tensor& out, int dim, F&& f) {
  int64_t sizes[kMaxDim], strides[2][kMaxDim];
  int n = 0;
  for (int d = 0; d < in.dim; ++d) {
    if (d == dim) continue;
    sizes[n] = in.sizes[d];
    strides[0][n] = in.strides[d];
    strides[1][n] = out.strides[d];
    ++n;
  }
  Line line;
  line.count = in.dim == 0 ? 1 : in.sizes[dim];
  line.in_stride = in.dim == 0 ? 1 : in.strides[dim];
  line.out_stride = out.dim == 0 ? 1 : out.strides[dim];
  for_each_offset<2>(sizes, n, strides, [&](const int64_t* o) {
    line.in_base = o[0];
    line.out_base = o[1];
    f(static_cast<const Line&>(line));
  });
}

}  // namespace detail
}  // namespace pocket
