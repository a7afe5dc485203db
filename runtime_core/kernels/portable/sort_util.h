// Sorting lines of a tensor along a dim (sort, topk). NaN orders above every number, as in
// ATen; equal values keep their index order (a stable order). Heap-free: the line being
// sorted lives in kernel temp memory and std::sort / std::partial_sort do not allocate.
#pragma once

#include <algorithm>
#include <utility>

#include "reduce_util.h"

namespace pocket {
namespace detail {

// out_values/out_indices get, for every line of `in` along `dim`, its first `k` elements in
// ascending (or, with `descending`, descending) order and their positions in the line.
// Outputs have in's shape with size k along dim (resized by the caller).
template <typename T>
Error sort_lines(KernelContext& ctx, const char* op, const Tensor& in, int dim, int64_t k,
                 bool descending, Tensor& out_values, Tensor& out_indices) {
  int64_t n = in.dim == 0 ? 1 : in.sizes[dim];
  using Item = std::pair<T, int64_t>;
  auto* line = static_cast<Item*>(ctx.allocate_temp(static_cast<size_t>(n > 0 ? n : 1) * sizeof(Item)));
  if (line == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for a line of %lld elements", op,
                    static_cast<long long>(n));
  auto before = [descending](const Item& a, const Item& b) {
    bool a_nan = is_nan(a.first), b_nan = is_nan(b.first);
    if (a_nan != b_nan) return descending ? a_nan : b_nan;
    if (!a_nan && a.first != b.first) return descending ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  const T* x = in.data_as<const T>();
  T* v = out_values.data_as<T>();
  int64_t* idx = out_indices.data_as<int64_t>();
  for_each_line(in, out_values, dim, [&](const Line& l) {
    for (int64_t i = 0; i < n; ++i) line[i] = Item(x[l.in_base + i * l.in_stride], i);
    if (k == n)
      std::sort(line, line + n, before);
    else
      std::partial_sort(line, line + k, line + n, before);
    for (int64_t i = 0; i < k; ++i) {
      v[l.out_base + i * l.out_stride] = line[i].first;
      idx[l.out_base + i * l.out_stride] = line[i].second;
    }
  });
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
