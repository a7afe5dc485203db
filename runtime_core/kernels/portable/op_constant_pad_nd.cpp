// aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
//
// pad lists (before, after) pairs starting from the last dim; negative amounts crop.
#include <algorithm>

#include "nn_util.h"

namespace pocket {

namespace {

// The part of the input that survives, and where it lands in the output.
struct PadPlan {
  int64_t out_sizes[kMaxDim];
  int64_t copy_sizes[kMaxDim];
  int64_t strides[2][kMaxDim];  // input, output strides over copy_sizes
  int64_t in_base = 0, out_base = 0;
};

Error plan_pad(KernelContext& ctx, const Tensor& in, const IntList& pad, PadPlan* p) {
  if (pad.size % 2 != 0 || pad.size > 2 * static_cast<size_t>(in.dim))
    return ctx.fail(Error::InvalidArgument,
                    "constant_pad_nd: pad has %zu items, expected an even number up to %d (2 per dim)",
                    pad.size, 2 * in.dim);
  int64_t out_strides[kMaxDim];
  for (int d = 0; d < in.dim; ++d) {
    size_t k = 2 * static_cast<size_t>(in.dim - 1 - d);  // pad pairs run from the last dim
    int64_t before = k < pad.size ? pad[k] : 0, after = k < pad.size ? pad[k + 1] : 0;
    const int64_t limit = int64_t(1) << 40;  // keeps the size arithmetic below from overflowing
    if (before < -limit || before > limit || after < -limit || after > limit)
      return ctx.fail(Error::InvalidArgument, "constant_pad_nd: padding (%lld, %lld) is too large",
                      static_cast<long long>(before), static_cast<long long>(after));
    p->out_sizes[d] = in.sizes[d] + before + after;
    if (p->out_sizes[d] < 0)
      return ctx.fail(Error::InvalidArgument,
                      "constant_pad_nd: padding (%lld, %lld) makes dim %d of size %lld negative",
                      static_cast<long long>(before), static_cast<long long>(after), d,
                      static_cast<long long>(in.sizes[d]));
    int64_t lo = std::max<int64_t>(0, -before), hi = std::min(in.sizes[d], in.sizes[d] + after);
    p->copy_sizes[d] = std::max<int64_t>(0, hi - lo);
    p->in_base += lo * in.strides[d];
    p->strides[0][d] = in.strides[d];
  }
  int64_t s = 1;
  for (int d = in.dim - 1; d >= 0; --d) {
    out_strides[d] = s;
    s *= p->out_sizes[d];
  }
  for (int d = 0; d < in.dim; ++d) {
    size_t k = 2 * static_cast<size_t>(in.dim - 1 - d);
    int64_t before = k < pad.size ? pad[k] : 0;
    p->out_base += std::max<int64_t>(0, before) * out_strides[d];
    p->strides[1][d] = out_strides[d];
  }
  return Error::Ok;
}

}  // namespace

Error op_constant_pad_nd(KernelContext& ctx, Value** args) {
  const Tensor& in = args[0]->tensor;
  const Value& value = *args[2];
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, "constant_pad_nd", "output", out, in.dtype);
  if (e != Error::Ok) return e;
  PadPlan p;
  e = plan_pad(ctx, in, args[1]->int_list, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, "constant_pad_nd", out, p.out_sizes, in.dim);
  if (e != Error::Ok) return e;
  return detail::dispatch_dtype(ctx, "constant_pad_nd", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_as<const T>();
    T* y = out.data_as<T>();
    std::fill(y, y + out.numel(), detail::scalar_as<T>(value));
    detail::for_each_offset<2>(p.copy_sizes, in.dim, p.strides, [&](const int64_t* o) {
      y[p.out_base + o[1]] = x[p.in_base + o[0]];
    });
  });
}

}  // namespace pocket
