// aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
//
// F.fold: self (N, C * kh * kw, L) holds, for each of the L = Lh * Lw sliding blocks, one
// column of block values; they are summed back into an (N, C, H, W) image (overlaps add).
#include "nn_util.h"

namespace pocket {

namespace {

const char* const kOp = "col2im";

struct Fold {
  int64_t n = 1, c = 0, h = 0, w = 0, blocks_h = 0, blocks_w = 0;
  int64_t k[2], dil[2], pad[2], stride[2];
};

// x (n, c * kh * kw, blocks_h * blocks_w) -> y (n, c, h, w)
template <typename T>
void fold(const T* x, T* y, const Fold& f) {
  const int64_t blocks = f.blocks_h * f.blocks_w;
  for (int64_t i = 0; i < f.n * f.c * f.h * f.w; ++i) y[i] = T(0);
  for (int64_t b = 0; b < f.n; ++b)
    for (int64_t ch = 0; ch < f.c; ++ch)
      for (int64_t ki = 0; ki < f.k[0]; ++ki)
        for (int64_t kj = 0; kj < f.k[1]; ++kj) {
          const T* col = x + ((b * f.c + ch) * f.k[0] * f.k[1] + ki * f.k[1] + kj) * blocks;
          T* plane = y + (b * f.c + ch) * f.h * f.w;
          for (int64_t bh = 0; bh < f.blocks_h; ++bh) {
            const int64_t r = bh * f.stride[0] - f.pad[0] + ki * f.dil[0];
            if (r < 0 || r >= f.h) continue;
            for (int64_t bw = 0; bw < f.blocks_w; ++bw) {
              const int64_t q = bw * f.stride[1] - f.pad[1] + kj * f.dil[1];
              if (q >= 0 && q < f.w) plane[r * f.w + q] += col[bh * f.blocks_w + bw];
            }
          }
        }
}

Error plan(KernelContext& ctx, const Tensor& in, Value** args, Fold* f) {
  int64_t size[2];
  Error e = detail::expand_param(ctx, kOp, "output_size", args[1]->int_list, 2, 1, size);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "kernel_size", args[2]->int_list, 2, 1, f->k);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "dilation", args[3]->int_list, 2, 1, f->dil);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "padding", args[4]->int_list, 2, 0, f->pad);
  if (e == Error::Ok) e = detail::expand_param(ctx, kOp, "stride", args[5]->int_list, 2, 1, f->stride);
  if (e != Error::Ok) return e;
  f->h = size[0], f->w = size[1];
  int64_t blocks[2];
  for (int a = 0; a < 2; ++a) {
    const int64_t room = size[a] + 2 * f->pad[a] - f->dil[a] * (f->k[a] - 1) - 1;
    blocks[a] = room < 0 ? 0 : room / f->stride[a] + 1;
  }
  f->blocks_h = blocks[0], f->blocks_w = blocks[1];
  char buf[128];
  const int64_t taps = f->k[0] * f->k[1];
  if ((in.dim != 2 && in.dim != 3) || in.sizes[in.dim - 2] % taps != 0 ||
      (in.dim == 3 && in.sizes[0] < 1))
    return ctx.fail(Error::InvalidArgument, "%s: input has shape %s, expected (N, C * %lld, L) or (C * %lld, L)",
                    kOp, shape_string(in.sizes, in.dim, buf, sizeof buf), static_cast<long long>(taps),
                    static_cast<long long>(taps));
  if (blocks[0] < 1 || blocks[1] < 1 || in.sizes[in.dim - 1] != blocks[0] * blocks[1])
    return ctx.fail(Error::InvalidArgument,
                    "%s: input has %lld blocks, but output_size, kernel_size, dilation, padding and stride give "
                    "%lld x %lld", kOp, static_cast<long long>(in.sizes[in.dim - 1]),
                    static_cast<long long>(blocks[0]), static_cast<long long>(blocks[1]));
  f->n = in.dim == 3 ? in.sizes[0] : 1;
  f->c = in.sizes[in.dim - 2] / taps;
  return Error::Ok;
}

}  // namespace

Error op_col2im(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[6]->tensor;
  Fold f;
  Error e = detail::expect_float_io(ctx, kOp, in, out);
  if (e == Error::Ok) e = plan(ctx, in, args, &f);
  const int64_t sizes[4] = {f.n, f.c, f.h, f.w};
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, out, in.dim == 3 ? sizes : sizes + 1, in.dim + 1);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, kOp, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, kOp, "input", in, &x);
    if (e == Error::Ok) fold(x, out.data_as<T>(), f);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
