#include "pool_util.h"

namespace pocket {
namespace detail {

// One output extent of a pooling window (ATen's pooling_output_shape); < 1 when too small.
static int64_t window_count(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                            bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + pad) --out;  // no window starts in the padding
  return out;
}

Error plan_pool_input(KernelContext& ctx, const char* op, const Tensor& in, int spatial, PoolNd* p) {
  static const char* const kShapes[] = {"", "(C, L) or (N, C, L)", "(C, H, W) or (N, C, H, W)",
                                        "(C, D, H, W) or (N, C, D, H, W)"};
  char buf[128];
  bool ok = in.dim == spatial + 1 || in.dim == spatial + 2;
  for (int a = 0; ok && a < spatial; ++a) ok = in.sizes[in.dim - spatial + a] >= 1;
  if (!ok)
    return ctx.fail(Error::InvalidArgument, "%s: input has shape %s, expected %s with spatial sizes >= 1",
                    op, shape_string(in.sizes, in.dim, buf, sizeof buf), kShapes[spatial]);
  p->dim = in.dim;
  p->planes = 1;
  for (int d = 0; d < in.dim - spatial; ++d) {
    p->planes *= in.sizes[d];
    p->out_sizes[d] = in.sizes[d];
  }
  for (int a = 0; a < spatial; ++a) p->in[3 - spatial + a] = in.sizes[in.dim - spatial + a];
  return Error::Ok;
}

static void set_out_sizes(int spatial, PoolNd* p) {
  for (int a = 0; a < spatial; ++a) p->out_sizes[p->dim - spatial + a] = p->out[3 - spatial + a];
}

Error plan_pool_nd(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                   const IntList& kernel, const IntList& stride, const IntList& padding,
                   const IntList* dilation, bool ceil_mode, PoolNd* p) {
  const int f = 3 - spatial;  // first used slot of the 3-slot arrays
  Error e = plan_pool_input(ctx, op, in, spatial, p);
  if (e == Error::Ok) e = expand_param(ctx, op, "kernel_size", kernel, spatial, 1, p->k + f);
  if (e == Error::Ok && stride.size == 0)
    for (int a = f; a < 3; ++a) p->stride[a] = p->k[a];
  else if (e == Error::Ok)
    e = expand_param(ctx, op, "stride", stride, spatial, 1, p->stride + f);
  if (e == Error::Ok) e = expand_param(ctx, op, "padding", padding, spatial, 0, p->pad + f);
  if (e == Error::Ok && dilation != nullptr)
    e = expand_param(ctx, op, "dilation", *dilation, spatial, 1, p->dil + f);
  if (e != Error::Ok) return e;
  for (int a = f; a < 3; ++a) {
    const int64_t extent = p->dil[a] * (p->k[a] - 1) + 1;
    if (2 * p->pad[a] > extent)
      return ctx.fail(Error::InvalidArgument, "%s: padding %lld is more than half the kernel extent %lld",
                      op, static_cast<long long>(p->pad[a]), static_cast<long long>(extent));
    p->out[a] = window_count(p->in[a], p->k[a], p->pad[a], p->stride[a], p->dil[a], ceil_mode);
    if (p->out[a] < 1) {
      char buf[128];
      return ctx.fail(Error::InvalidArgument, "%s: input %s is too small for kernel size %lld", op,
                      shape_string(in.sizes, in.dim, buf, sizeof buf), static_cast<long long>(p->k[a]));
    }
  }
  set_out_sizes(spatial, p);
  return Error::Ok;
}

Error plan_adaptive_pool(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                         const IntList& output_size, PoolNd* p) {
  if (output_size.size != static_cast<size_t>(spatial))
    return ctx.fail(Error::InvalidArgument, "%s: output_size has %zu items, expected %d", op,
                    output_size.size, spatial);
  Error e = plan_pool_input(ctx, op, in, spatial, p);
  if (e == Error::Ok) e = expand_param(ctx, op, "output_size", output_size, spatial, 1, p->out + 3 - spatial);
  if (e == Error::Ok) set_out_sizes(spatial, p);
  return e;
}

// Runs `pool(x, y)` over in's float data into out, resized to the plan's output shape.
template <typename Pool>
static Error run_float_pool(KernelContext& ctx, const char* op, const Tensor& in, const PoolNd& p, Tensor& out,
                            Pool&& pool) {
  Error e = resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) pool(x, out.data_as<T>());
  });
  return dispatched != Error::Ok ? dispatched : e;
}

Error avg_pool_op(KernelContext& ctx, const char* op, const Tensor& in, int spatial, const IntList& kernel,
                  const IntList& stride, const IntList& padding, bool ceil_mode, bool include_pad,
                  int64_t divisor_override, Tensor& out) {
  PoolNd p;
  Error e = expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = plan_pool_nd(ctx, op, in, spatial, kernel, stride, padding, nullptr, ceil_mode, &p);
  if (e != Error::Ok) return e;
  return run_float_pool(ctx, op, in, p, out, [&](const auto* x, auto* y) {
    avg_pool_nd(x, y, p, include_pad, divisor_override);
  });
}

Error adaptive_avg_pool_op(KernelContext& ctx, const char* op, const Tensor& in, int spatial,
                           const IntList& output_size, Tensor& out) {
  PoolNd p;
  Error e = expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = plan_adaptive_pool(ctx, op, in, spatial, output_size, &p);
  if (e != Error::Ok) return e;
  return run_float_pool(ctx, op, in, p, out, [&](const auto* x, auto* y) { adaptive_avg_pool_nd(x, y, p); });
}

}  // namespace detail
}  // namespace pocket
