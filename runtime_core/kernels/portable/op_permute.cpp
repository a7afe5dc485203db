// aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
#include <algorithm>

#include "parallel_util.h"
#include "shape_util.h"

namespace pocket {

namespace {

// Columns [c0, c1) of a (R, cols) matrix s, transposed into d (cols, R): each column's R
// values are written together (R known at compile time: a few registers per column).
template <int R>
void interleave(const uint32_t* __restrict s, uint32_t* __restrict d, int64_t cols, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; ++c)
    POCKET_UNROLL for (int r = 0; r < R; ++r) d[c * R + r] = s[r * cols + c];
}

using detail::InterleaveFn;
using detail::Transpose8Fn;
constexpr InterleaveFn kInterleave[8] = {interleave<0>, interleave<1>, interleave<2>, interleave<3>,
                                         interleave<4>, interleave<5>, interleave<6>, interleave<7>};

// The layout changes at the edges of a channels-last chain (exporter/passes/channels_last.py):
// [0, 2, 3, 1] (NCHW -> NHWC) and [0, 3, 1, 2] (back) of a contiguous 4-d tensor of 4-byte
// elements, as a (rows, cols) -> (cols, rows) transpose per batch item in 8x8 blocks (the
// general strided copy takes ~5x longer); 3 channels through `three`, whole blocks through
// `block8`, when not null. False when the permute is not one of these.
bool transpose_channels(KernelContext& ctx, const Tensor& self, const IntList& dims, Tensor& out,
                        InterleaveFn three, Transpose8Fn block8) {
  const bool to_last = dims[0] == 0 && dims[1] == 2 && dims[2] == 3 && dims[3] == 1;
  const bool to_first = dims[0] == 0 && dims[1] == 3 && dims[2] == 1 && dims[3] == 2;
  if (self.dim != 4 || !(to_last || to_first) || element_size(self.dtype) != 4 || !self.is_contiguous() ||
      self.dtype != out.dtype)
    return false;
  const int64_t* n = self.sizes;
  const int64_t sizes[4] = {n[dims[0]], n[dims[1]], n[dims[2]], n[dims[3]]};
  if (out.resize(sizes, 4) != Error::Ok) return false;  // the general path reports it
  const int64_t rows = to_last ? n[1] : n[1] * n[2], cols = to_last ? n[2] * n[3] : n[3];
  const uint32_t* src = self.data_as<const uint32_t>();
  uint32_t* dst = out.data_as<uint32_t>();
  constexpr int64_t B = 8;
  if (rows < B) {  // few channels (a network's input): pixel by pixel, split over the pixels
    constexpr int64_t kCols = 2048;
    const int64_t col_chunks = (cols + kCols - 1) / kCols;
    const InterleaveFn fn = rows == 3 && three != nullptr ? three : kInterleave[rows];
    ctx.parallel_for(n[0] * col_chunks, detail::grain_for(kCols * rows), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t item = b / col_chunks, c0 = b % col_chunks * kCols;
        fn(src + item * rows * cols, dst + item * rows * cols, cols, c0, std::min(cols, c0 + kCols));
      }
    });
    return true;
  }
  const int64_t row_blocks = (rows + B - 1) / B;
  ctx.parallel_for(n[0] * row_blocks, detail::grain_for(B * cols), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t item = b / row_blocks, r0 = b % row_blocks * B, r1 = std::min(rows, r0 + B);
      const uint32_t* s = src + item * rows * cols;
      uint32_t* d = dst + item * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += B) {
        const int64_t c1 = std::min(cols, c0 + B);
        if (r1 - r0 == B && c1 - c0 == B) {  // a whole block (fixed bounds: 20% faster without block8)
          const uint32_t* sb = s + r0 * cols + c0;
          uint32_t* db = d + c0 * rows + r0;
          if (block8 != nullptr) {
            block8(sb, cols, db, rows);
          } else {
            POCKET_UNROLL for (int64_t c = 0; c < B; ++c)
              POCKET_UNROLL for (int64_t r = 0; r < B; ++r) db[c * rows + r] = sb[r * cols + c];
          }
          continue;
        }
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = r0; r < r1; ++r) d[c * rows + r] = s[r * cols + c];
      }
    }
  });
  return true;
}

}  // namespace

namespace detail {

Error permute_interleaving(KernelContext& ctx, Value** args, InterleaveFn three, Transpose8Fn block8) {
  const Tensor& self = args[0]->tensor;
  const IntList& dims = args[1]->int_list;
  Tensor& out = args[2]->tensor;
  if (dims.size != static_cast<size_t>(self.dim))
    return ctx.fail(Error::InvalidArgument, "permute: %zu dims given for a %d-d tensor", dims.size,
                    self.dim);
  if (dims.size == 4 && transpose_channels(ctx, self, dims, out, three, block8)) return Error::Ok;
  Tensor view = self;
  bool seen[kMaxDim] = {};
  for (int i = 0; i < self.dim; ++i) {
    int d = 0;
    Error e = detail::normalize_dim(ctx, "permute", dims[i], self.dim, &d);
    if (e != Error::Ok) return e;
    if (seen[d]) return ctx.fail(Error::InvalidArgument, "permute: dim %d is repeated", d);
    seen[d] = true;
    view.sizes[i] = self.sizes[d];
    view.strides[i] = self.strides[d];
  }
  return detail::copy_to_output(ctx, "permute", view, out, view.sizes, view.dim);
}

}  // namespace detail

Error op_permute(KernelContext& ctx, Value** args) { return detail::permute_interleaving(ctx, args, nullptr); }

}  // namespace pocket
