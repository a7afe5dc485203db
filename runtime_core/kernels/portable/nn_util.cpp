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

Error plan_upsample2d(KernelContext& ctx, const char* op, const Tensor& in, const Value& output_size,
                      const Value& scale_factors, Tensor& out, Upsample2d* p) {
  if (in.dim != 4) {
    char buf[128];
    return ctx.fail(Error::InvalidArgument, "%s: input has shape %s, expected (N, C, H, W)", op,
                    shape_string(in.sizes, in.dim, buf, sizeof buf));
  }
  Error e = expect_float_io(ctx, op, in, out);
  if (e != Error::Ok) return e;
  p->n = in.sizes[0], p->c = in.sizes[1], p->in_h = in.sizes[2], p->in_w = in.sizes[3];
  bool has_size = !output_size.is_none(), has_scales = !scale_factors.is_none();
  if (has_size == has_scales)
    return ctx.fail(Error::InvalidArgument, "%s: give exactly one of output_size and scale_factors", op);
  if (has_size) {
    if (output_size.int_list.size != 2)
      return ctx.fail(Error::InvalidArgument, "%s: output_size has %zu items, expected 2", op,
                      output_size.int_list.size);
    p->out_h = output_size.int_list[0], p->out_w = output_size.int_list[1];
    p->scale_h = p->scale_w = 0;
  } else {
    const DoubleList& s = scale_factors.double_list;
    if (s.size != 2)
      return ctx.fail(Error::InvalidArgument, "%s: scale_factors has %zu items, expected 2", op, s.size);
    for (size_t k = 0; k < 2; ++k)
      if (!(s[k] > 0 && s[k] < 1e6))
        return ctx.fail(Error::InvalidArgument, "%s: scale factor %g must be positive", op, s[k]);
    p->scale_h = s[0], p->scale_w = s[1];
    p->out_h = static_cast<int64_t>(static_cast<double>(p->in_h) * s[0]);
    p->out_w = static_cast<int64_t>(static_cast<double>(p->in_w) * s[1]);
  }
  if (p->out_h <= 0 || p->out_w <= 0 || p->in_h <= 0 || p->in_w <= 0)
    return ctx.fail(Error::InvalidArgument, "%s: input (%lld, %lld) and output (%lld, %lld) sizes must be positive",
                    op, static_cast<long long>(p->in_h), static_cast<long long>(p->in_w),
                    static_cast<long long>(p->out_h), static_cast<long long>(p->out_w));
  int64_t sizes[4] = {p->n, p->c, p->out_h, p->out_w};
  return resize_output(ctx, op, out, sizes, 4);
}

}  // namespace detail
}  // namespace pocket
