// aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
#include "parallel_util.h"
#include "parts.h"

namespace pocket {

// x (m, k) · w (n, k)ᵀ + b (n) -> y (m, n), outputs [begin, end) in row-major order.
template <typename T>
static void linear_outputs(const T* x, const T* w, const T* b, T* y, int64_t n, int64_t k,
                           int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t r = i / n, c = i % n;
    y[i] = detail::dot_product(x + r * k, w + c * k, k) + (b != nullptr ? b[c] : T(0));
  }
}

static Error check_linear(KernelContext& ctx, const Tensor& in, const Tensor& w, const Tensor* b,
                          const Tensor& out) {
  Error e = detail::expect_float_io(ctx, "linear", in, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "linear", "weight", w, in.dtype);
  if (e != Error::Ok) return e;
  char buf[128];
  if (in.dim < 1)
    return ctx.fail(Error::InvalidArgument, "linear: input is 0-d, expected at least 1 dim");
  if (w.dim != 2)
    return ctx.fail(Error::InvalidArgument, "linear: weight has shape %s, expected 2 dims [out, in]",
                    shape_string(w.sizes, w.dim, buf, sizeof buf));
  if (w.sizes[1] != in.sizes[in.dim - 1])
    return ctx.fail(Error::InvalidArgument,
                    "linear: weight has %lld input features, input has %lld (last dim of %s)",
                    static_cast<long long>(w.sizes[1]), static_cast<long long>(in.sizes[in.dim - 1]),
                    shape_string(in.sizes, in.dim, buf, sizeof buf));
  if (b != nullptr) return detail::expect_vector(ctx, "linear", "bias", *b, w.sizes[0], in.dtype);
  return Error::Ok;
}

namespace detail {

Error prepare_linear(KernelContext& ctx, Value** args, LinearArgs* a) {
  const Tensor& in = args[0]->tensor;      // (..., k)
  const Tensor& weight = args[1]->tensor;  // (n, k)
  const Tensor* bias = args[2]->is_none() ? nullptr : &args[2]->tensor;  // (n)
  Tensor& out = args[3]->tensor;           // (..., n)
  Error e = check_linear(ctx, in, weight, bias, out);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  for (int d = 0; d < in.dim; ++d) sizes[d] = in.sizes[d];
  sizes[in.dim - 1] = weight.sizes[0];
  e = resize_output(ctx, "linear", out, sizes, in.dim);
  if (e != Error::Ok) return e;
  a->dtype = in.dtype;
  a->k = weight.sizes[1];
  a->n = weight.sizes[0];
  a->m = 1;
  for (int d = 0; d < in.dim - 1; ++d) a->m *= in.sizes[d];
  a->y = out.data;
  Error dispatched = dispatch_float(ctx, "linear", in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = nullptr, *w = nullptr, *b = nullptr;
    e = contiguous_data(ctx, "linear", "input", in, &x);
    if (e == Error::Ok) e = contiguous_data(ctx, "linear", "weight", weight, &w);
    if (e == Error::Ok && bias != nullptr) e = contiguous_data(ctx, "linear", "bias", *bias, &b);
    a->x = x;
    a->w = w;
    a->b = b;
  });
  return dispatched != Error::Ok ? dispatched : e;
}

void linear_portable(KernelContext& ctx, const LinearArgs& a) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    const T* w = static_cast<const T*>(a.w);
    const T* b = static_cast<const T*>(a.b);
    T* y = static_cast<T*>(a.y);
    ctx.parallel_for(a.m * a.n, grain_for(a.k), [&](int64_t begin, int64_t end) {
      linear_outputs(x, w, b, y, a.n, a.k, begin, end);
    });
  };
  if (a.dtype == ScalarType::Float64)
    run(double{});
  else
    run(float{});
}

}  // namespace detail

Error op_linear(KernelContext& ctx, Value** args) {
  detail::LinearArgs a;
  Error e = detail::prepare_linear(ctx, args, &a);
  if (e == Error::Ok) detail::linear_portable(ctx, a);
  return e;
}

}  // namespace pocket
