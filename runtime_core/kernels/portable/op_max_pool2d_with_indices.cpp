// aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
//
// Indices are flat positions h * W + w within each input plane, as in ATen. A NaN in a window
// is its maximum (the last NaN wins, as in ATen); ties keep the first position. Per output
// row, the columns whose windows lie inside the input go tap by tap across the row (vectorized
// by the compiler), the border ones window by window.
#include <algorithm>
#include <cmath>

#include "nn_util.h"
#include "parallel_util.h"

namespace pocket {

// Taps [lo, hi) of a window starting at `start` (stride `dil`) that fall inside [0, n).
static inline void taps_inside(int64_t start, int64_t dil, int64_t taps, int64_t n, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = taps;
  if (start >= 0 && start + (taps - 1) * dil < n) return;  // the common case: no division
  if (start < 0) *lo = (-start + dil - 1) / dil;
  const int64_t inside = start >= n ? 0 : (n - start + dil - 1) / dil;
  if (inside < *hi) *hi = inside;
}

// Columns [o0, o1) of output row oh, one window at a time.
template <typename T>
static void max_pool_windows(const T* xp, T* y, int64_t* idx, const detail::Pool2d& p, int64_t oh, int64_t o0,
                             int64_t o1) {
  const int64_t h0 = oh * p.stride[0] - p.pad[0];
  int64_t kh0, kh1;
  taps_inside(h0, p.dil[0], p.k[0], p.in_h, &kh0, &kh1);
  for (int64_t ow = o0; ow < o1; ++ow) {
    const int64_t w0 = ow * p.stride[1] - p.pad[1];
    int64_t kw0, kw1;
    taps_inside(w0, p.dil[1], p.k[1], p.in_w, &kw0, &kw1);
    T best = -INFINITY;
    int64_t best_i = -1;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const int64_t row = (h0 + kh * p.dil[0]) * p.in_w;
      for (int64_t kw = kw0; kw < kw1; ++kw) {
        const int64_t i = row + w0 + kw * p.dil[1];
        const T v = xp[i];
        if (best_i < 0) best_i = i;  // a window of -inf reports its first
        if (v > best || detail::is_nan(v)) {
          best = v;
          best_i = i;
        }
      }
    }
    y[ow] = best;
    idx[ow] = best_i;
  }
}

// Columns [o0, o1) (at most kChunk) of output row oh whose windows lie inside the input row,
// tap by tap across all of them (the loop the compiler vectorizes), in the windows' order:
// the same maxima and positions as max_pool_windows. S: the column stride (0: p.stride[1]).
constexpr int64_t kChunk = 256;
template <int S, typename T>
static void max_pool_inside(const T* xp, T* y, int64_t* idx, const detail::Pool2d& p, int64_t oh, int64_t kh0,
                            int64_t kh1, int64_t o0, int64_t o1) {
  const int64_t s = S > 0 ? S : p.stride[1], n = o1 - o0, kw_n = p.k[1];
  const int64_t h0 = oh * p.stride[0] - p.pad[0], w0 = o0 * s - p.pad[1];
  int32_t tap[kChunk];  // the winning tap (kh * kw_n + kw) of each column
  T* yo = y + o0;
  for (int64_t kh = kh0; kh < kh1; ++kh)
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const T* r = xp + (h0 + kh * p.dil[0]) * p.in_w + w0 + kw * p.dil[1];
      const int32_t t = static_cast<int32_t>(kh * kw_n + kw);
      if (kh == kh0 && kw == 0) {
        for (int64_t i = 0; i < n; ++i) {
          yo[i] = r[i * s];
          tap[i] = t;
        }
        continue;
      }
      for (int64_t i = 0; i < n; ++i) {
        const T v = r[i * s];
        const bool take = v > yo[i] || v != v;  // NaN wins
        yo[i] = take ? v : yo[i];
        tap[i] = take ? t : tap[i];
      }
    }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t kh = tap[i] / kw_n, kw = tap[i] % kw_n;
    idx[o0 + i] = (h0 + kh * p.dil[0]) * p.in_w + w0 + i * s + kw * p.dil[1];
  }
}

// Output rows [r0, r1) (row = plane * out_h + oh) of x (planes, in_h, in_w) -> y, idx.
template <typename T>
static void max_pool(const T* x, T* y, int64_t* idx, const detail::Pool2d& p, int64_t r0, int64_t r1) {
  // The columns whose windows lie inside the row: [inside0, inside1).
  const int64_t s = p.stride[1], last = p.in_w - 1 - (p.k[1] - 1) * p.dil[1] + p.pad[1];
  const int64_t inside0 = std::min((p.pad[1] + s - 1) / s, p.out_w);
  const int64_t inside1 = std::max(inside0, last < 0 ? 0 : std::min(last / s + 1, p.out_w));
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / p.out_h, oh = r % p.out_h;
    const T* xp = x + c * p.in_h * p.in_w;
    T* yr = y + r * p.out_w;
    int64_t* ir = idx + r * p.out_w;
    int64_t kh0, kh1;
    taps_inside(oh * p.stride[0] - p.pad[0], p.dil[0], p.k[0], p.in_h, &kh0, &kh1);
    if (kh0 >= kh1) {  // no row of the window inside: every window is empty
      max_pool_windows(xp, yr, ir, p, oh, 0, p.out_w);
      continue;
    }
    max_pool_windows(xp, yr, ir, p, oh, 0, inside0);
    for (int64_t o0 = inside0; o0 < inside1; o0 += kChunk) {
      const int64_t o1 = std::min(o0 + kChunk, inside1);
      if (s == 1) max_pool_inside<1>(xp, yr, ir, p, oh, kh0, kh1, o0, o1);
      else if (s == 2) max_pool_inside<2>(xp, yr, ir, p, oh, kh0, kh1, o0, o1);
      else max_pool_inside<0>(xp, yr, ir, p, oh, kh0, kh1, o0, o1);
    }
    max_pool_windows(xp, yr, ir, p, oh, inside1, p.out_w);
  }
}

Error op_max_pool2d_with_indices(KernelContext& ctx, Value** args) {
  const char* op = "max_pool2d_with_indices";
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[6]->tensor;
  Tensor& indices = args[7]->tensor;
  detail::Pool2d p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "indices", indices, ScalarType::Int64);
  if (e == Error::Ok)
    e = detail::plan_pool2d(ctx, op, in, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                            &args[4]->int_list, args[5]->b, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, indices, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e != Error::Ok) return;
    const int64_t per_row = p.out_w * p.k[0] * p.k[1];
    ctx.parallel_for(p.planes * p.out_h, detail::grain_for(per_row), [&](int64_t r0, int64_t r1) {
      max_pool(x, out.data_as<T>(), indices.data_as<int64_t>(), p, r0, r1);
    });
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
