// Pooling over 1, 2 or 3 trailing spatial dims, shared by the avg/max/adaptive pool kernels
// of 1d and 3d (the 2d kernels predate it). A plan pads the spatial dims at the front with
// extent 1, so every loop below walks three of them: (planes, d, h, w).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "nn_util.h"

namespace pocket {
namespace detail {

struct PoolNd {
  int64_t planes = 0;                  // product of the non-spatial dims
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  int64_t out_sizes[kMaxDim] = {};     // output shape, `dim` dims like the input
  int dim = 0;
};

// Checks that `in` has `spatial` spatial dims after one or two leading dims (C or N, C), each
// at least 1, and fills p's planes, in[] and the leading output sizes.
Error plan_pool_input(KernelContext& ctx, const char* op, const Tensor& in, int spatial, PoolNd* p);

// Reads kernel_size, stride (empty: the kernel size), padding and dilation (null: 1) for a
// window pool with `spatial` dims as ATen does, and computes the output extents.
Error plan_pool_nd(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                   const IntList& kernel, const IntList& stride, const IntList& padding,
                   const IntList* dilation, bool ceil_mode, PoolNd* p);

// Adaptive pooling: output cell o of n covers input [floor(o * in / n), ceil((o + 1) * in / n)).
Error plan_adaptive_pool(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                         const IntList& output_size, PoolNd* p);

inline int64_t adaptive_start(int64_t o, int64_t in, int64_t n) { return o * in / n; }
inline int64_t adaptive_end(int64_t o, int64_t in, int64_t n) { return ((o + 1) * in + n - 1) / n; }

// The whole avg_pool{1,3}d kernel over `spatial` dims (divisor_override 0: none).
Error avg_pool_op(KernelContext& ctx, const char* op, const Tensor& in, int spatial, const IntList& kernel,
                  const IntList& stride, const IntList& padding, bool ceil_mode, bool include_pad,
                  int64_t divisor_override, Tensor& out);

// The whole adaptive_avg_pool{1,3}d kernel over `spatial` dims.
Error adaptive_avg_pool_op(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                           const IntList& output_size, Tensor& out);

// x (planes, in) -> y (planes, out): the mean of each window; divisor_override 0 means none.
// The divisor is the window clipped to the padded input (include_pad) or to the input.
template <typename T>
void avg_pool_nd(const T* x, T* y, const PoolNd& p, bool include_pad, int64_t divisor_override) {
  const int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
  T* o = y;
  for (int64_t c = 0; c < p.planes; ++c)
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          const int64_t pos[3] = {od, oh, ow};
          int64_t lo[3], hi[3], padded = 1, inside = 1;
          for (int a = 0; a < 3; ++a) {
            const int64_t s = pos[a] * p.stride[a] - p.pad[a];
            const int64_t e = std::min(s + p.k[a], p.in[a] + p.pad[a]);
            padded *= e - s;
            lo[a] = std::max<int64_t>(s, 0);
            hi[a] = std::min(e, p.in[a]);
            inside *= std::max<int64_t>(hi[a] - lo[a], 0);
          }
          double sum = 0;
          const T* xp = x + c * in_plane;
          for (int64_t d = lo[0]; d < hi[0]; ++d)
            for (int64_t h = lo[1]; h < hi[1]; ++h)
              for (int64_t w = lo[2]; w < hi[2]; ++w) sum += xp[(d * p.in[1] + h) * p.in[2] + w];
          const int64_t div = divisor_override != 0 ? divisor_override : include_pad ? padded : inside;
          // A window wholly inside the padding (possible with ceil_mode) averages to 0.
          *o++ = inside == 0 ? T(0) : static_cast<T>(sum / static_cast<double>(div));
        }
}

// x (planes, in) -> y, idx (planes, out): the maximum of each (dilated) window and its flat
// position within the input plane. NaN is a maximum (the last NaN wins); ties keep the first.
template <typename T>
void max_pool_nd(const T* x, T* y, int64_t* idx, const PoolNd& p) {
  const int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
  for (int64_t c = 0; c < p.planes; ++c)
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          const int64_t s[3] = {od * p.stride[0] - p.pad[0], oh * p.stride[1] - p.pad[1],
                                ow * p.stride[2] - p.pad[2]};
          const T* xp = x + c * in_plane;
          T best = -INFINITY;
          int64_t best_i = -1;
          for (int64_t kd = 0; kd < p.k[0]; ++kd) {
            const int64_t d = s[0] + kd * p.dil[0];
            if (d < 0 || d >= p.in[0]) continue;
            for (int64_t kh = 0; kh < p.k[1]; ++kh) {
              const int64_t h = s[1] + kh * p.dil[1];
              if (h < 0 || h >= p.in[1]) continue;
              for (int64_t kw = 0; kw < p.k[2]; ++kw) {
                const int64_t w = s[2] + kw * p.dil[2];
                if (w < 0 || w >= p.in[2]) continue;
                const int64_t i = (d * p.in[1] + h) * p.in[2] + w;
                if (best_i < 0) best_i = i;  // a window of -inf reports its first
                if (xp[i] > best || is_nan(xp[i])) {
                  best = xp[i];
                  best_i = i;
                }
              }
            }
          }
          const int64_t o = ((c * p.out[0] + od) * p.out[1] + oh) * p.out[2] + ow;
          y[o] = best;
          idx[o] = best_i;
        }
}

// x (planes, in) -> y (planes, out): the mean of each adaptive window.
template <typename T>
void adaptive_avg_pool_nd(const T* x, T* y, const PoolNd& p) {
  const int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
  T* o = y;
  for (int64_t c = 0; c < p.planes; ++c)
    for (int64_t od = 0; od < p.out[0]; ++od) {
      const int64_t d0 = adaptive_start(od, p.in[0], p.out[0]), d1 = adaptive_end(od, p.in[0], p.out[0]);
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        const int64_t h0 = adaptive_start(oh, p.in[1], p.out[1]), h1 = adaptive_end(oh, p.in[1], p.out[1]);
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          const int64_t w0 = adaptive_start(ow, p.in[2], p.out[2]), w1 = adaptive_end(ow, p.in[2], p.out[2]);
          double sum = 0;
          const T* xp = x + c * in_plane;
          for (int64_t d = d0; d < d1; ++d)
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) sum += xp[(d * p.in[1] + h) * p.in[2] + w];
          *o++ = static_cast<T>(sum / static_cast<double>((d1 - d0) * (h1 - h0) * (w1 - w0)));
        }
      }
    }
}

}  // namespace detail
}  // namespace pocket
