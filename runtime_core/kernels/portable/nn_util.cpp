#include "nn_util.h"

namespace pocket {
namespace detail {

Error expand_param(KernelContext& ctx, const char* op, const char* name, const IntList& list,
                   int n, int64_t min_value, int64_t* out) {
  if (list.size != 1 && list.size != static_cast<size_t>(n))
    return ctx.fail(Error::InvalidArgument, "%s: %s has %zu items, expected 1 or %d", op, name,
                    list.size, n);
  const int64_t max_value = int64_t(1) << 32;  // keeps size arithmetic far from overflow
  for (int k = 0; k < n; ++k) {
    out[k] = list[list.size == 1 ? 0 : static_cast<size_t>(k)];
    if (out[k] < min_value || out[k] > max_value)
      return ctx.fail(Error::InvalidArgument, "%s: %s[%d] is %lld, expected %lld to %lld", op,
                      name, k, static_cast<long long>(out[k]), static_cast<long long>(min_value),
                      static_cast<long long>(max_value));
  }
  return Error::Ok;
}

Error expect_vector(KernelContext& ctx, const char* op, const char* arg, const Tensor& t,
                    int64_t n, ScalarType dtype) {
  if (t.dim != 1 || t.sizes[0] != n) {
    char buf[128];
    return ctx.fail(Error::InvalidArgument, "%s: %s has shape %s, expected [%lld]", op, arg,
                    shape_string(t.sizes, t.dim, buf, sizeof buf), static_cast<long long>(n));
  }
  return expect_dtype(ctx, op, arg, t, dtype);
}

Error expect_float_io(KernelContext& ctx, const char* op, const Tensor& t, const Tensor& out) {
  if (t.dtype != ScalarType::Float32 && t.dtype != ScalarType::Float64)
    return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported (float32 or float64 expected)",
                    op, scalar_type_name(t.dtype));
  if (out.dtype != t.dtype)
    return ctx.fail(Error::InvalidArgument, "%s: output dtype %s differs from input dtype %s", op,
                    scalar_type_name(out.dtype), scalar_type_name(t.dtype));
  return Error::Ok;
}

// One output extent of a pooling window (ATen's pooling_output_shape); < 1 when too small.
static int64_t pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                                bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + pad) --out;
  return out;
}

Error plan_pool2d(KernelContext& ctx, const char* op, const Tensor& in, const IntList& kernel,
                  const IntList& stride, const IntList& padding, const IntList* dilation,
                  bool ceil_mode, Pool2d* p) {
  char buf[128];
  if (in.dim != 3 && in.dim != 4)
    return ctx.fail(Error::InvalidArgument,
                    "%s: input has shape %s, expected (C, H, W) or (N, C, H, W)", op,
                    shape_string(in.sizes, in.dim, buf, sizeof buf));
  Error e = expand_param(ctx, op, "kernel_size", kernel, 2, 1, p->k);
  if (e == Error::Ok && stride.size == 0) {
    p->stride[0] = p->k[0];
    p->stride[1] = p->k[1];
  } else if (e == Error::Ok) {
    e = expand_param(ctx, op, "stride", stride, 2, 1, p->stride);
  }
  if (e == Error::Ok) e = expand_param(ctx, op, "padding", padding, 2, 0, p->pad);
  if (e == Error::Ok && dilation != nullptr)
    e = expand_param(ctx, op, "dilation", *dilation, 2, 1, p->dil);
  if (e != Error::Ok) return e;
  p->dim = in.dim;
  p->in_h = in.sizes[in.dim - 2];
  p->in_w = in.sizes[in.dim - 1];
  p->planes = in.numel() / (p->in_h * p->in_w > 0 ? p->in_h * p->in_w : 1);
  int64_t in_hw[2] = {p->in_h, p->in_w}, out_hw[2];
  for (int a = 0; a < 2; ++a) {
    if (2 * p->pad[a] > p->dil[a] * (p->k[a] - 1) + 1)
      return ctx.fail(Error::InvalidArgument,
                      "%s: padding %lld is more than half the kernel extent %lld", op,
                      static_cast<long long>(p->pad[a]),
                      static_cast<long long>(p->dil[a] * (p->k[a] - 1) + 1));
    out_hw[a] = pool_output_size(in_hw[a], p->k[a], p->pad[a], p->stride[a], p->dil[a], ceil_mode);
    if (out_hw[a] < 1 || in_hw[a] < 1)
      return ctx.fail(Error::InvalidArgument, "%s: input %s is too small for kernel size %lld",
                      op, shape_string(in.sizes, in.dim, buf, sizeof buf),
                      static_cast<long long>(p->k[a]));
  }
  p->out_h = out_hw[0];
  p->out_w = out_hw[1];
  for (int d = 0; d < in.dim - 2; ++d) p->out_sizes[d] = in.sizes[d];
  p->out_sizes[in.dim - 2] = p->out_h;
  p->out_sizes[in.dim - 1] = p->out_w;
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
