#include "pad_util.h"

#include "shape_util.h"

namespace pocket {
namespace detail {

// The source index of output index o along a dim of `n` elements padded by `before`.
static int64_t pad_source(int64_t o, int64_t before, int64_t n, PadMode mode) {
  int64_t i = o - before;
  if (mode == PadMode::Replicate) return i < 0 ? 0 : (i >= n ? n - 1 : i);
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

Error pad_nd(KernelContext& ctx, const char* op, const Tensor& in, const IntList& padding, int dims,
             PadMode mode, Tensor& out) {
  if (padding.size != static_cast<size_t>(2 * dims))
    return ctx.fail(Error::InvalidArgument, "%s: padding has %zu items, expected %d", op, padding.size, 2 * dims);
  if (in.dim != dims + 1 && in.dim != dims + 2)
    return ctx.fail(Error::InvalidArgument, "%s: input has %d dims, expected %d or %d", op, in.dim,
                    dims + 1, dims + 2);
  Error e = expect_same_dtype(ctx, op, in, out);
  if (e != Error::Ok) return e;
  // (outer, D, H, W) with the unpadded leading dims folded into outer, D = H = 1 when unused.
  int64_t size[3] = {1, 1, 1}, before[3] = {0, 0, 0}, osize[3] = {1, 1, 1};
  int64_t out_sizes[kMaxDim];
  for (int d = 0; d < in.dim; ++d) out_sizes[d] = in.sizes[d];
  for (int k = 0; k < dims; ++k) {  // k = 0 is the last dim
    int d = in.dim - 1 - k, slot = 2 - k;
    int64_t lo = padding[2 * static_cast<size_t>(k)], hi = padding[2 * static_cast<size_t>(k) + 1];
    int64_t n = in.sizes[d];
    bool ok = lo >= 0 && hi >= 0 && n > 0 && lo <= (int64_t(1) << 32) && hi <= (int64_t(1) << 32) &&
              (mode == PadMode::Replicate || (lo < n && hi < n));
    if (!ok)
      return ctx.fail(Error::InvalidArgument, "%s: padding (%lld, %lld) does not fit dim %d of size %lld%s",
                      op, static_cast<long long>(lo), static_cast<long long>(hi), d, static_cast<long long>(n),
                      mode == PadMode::Reflect ? " (reflection needs 0 <= pad < size)" : "");
    size[slot] = n, before[slot] = lo, osize[slot] = n + lo + hi;
    out_sizes[d] = osize[slot];
  }
  e = resize_output(ctx, op, out, out_sizes, in.dim);
  if (e != Error::Ok) return e;
  int64_t outer = 1;
  for (int d = 0; d < in.dim - dims; ++d) outer *= in.sizes[d];
  auto* cols = static_cast<int64_t*>(ctx.allocate_temp(static_cast<size_t>(osize[2]) * sizeof(int64_t)));
  if (cols == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for %lld column indices", op,
                    static_cast<long long>(osize[2]));
  for (int64_t w = 0; w < osize[2]; ++w) cols[w] = pad_source(w, before[2], size[2], mode);
  // Elements are only copied: move them as unsigned integers of their size.
  auto rows = [&](auto tag) {
    using U = decltype(tag);
    const U* x = nullptr;
    Error err = contiguous_data(ctx, op, "input", in, &x);
    if (err != Error::Ok) return err;
    U* y = out.data_as<U>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t dd = 0; dd < osize[0]; ++dd)
        for (int64_t h = 0; h < osize[1]; ++h) {
          int64_t sd = pad_source(dd, before[0], size[0], mode), sh = pad_source(h, before[1], size[1], mode);
          const U* row = x + ((o * size[0] + sd) * size[1] + sh) * size[2];
          for (int64_t w = 0; w < osize[2]; ++w) *y++ = row[cols[w]];
        }
    return Error::Ok;
  };
  switch (element_size(in.dtype)) {
    case 1: return rows(uint8_t{});
    case 2: return rows(uint16_t{});
    case 4: return rows(uint32_t{});
    default: return rows(uint64_t{});
  }
}

}  // namespace detail
}  // namespace pocket
