// aten::_pdist_forward(Tensor self, float p=2.) -> Tensor
//
// The p-norm distances between the rows of self (N, M): N * (N - 1) / 2 values, pairs (i, j)
// with i < j in row-major order.
#include "distance_util.h"
#include "nn_util.h"

namespace pocket {

Error op_pdist_forward(KernelContext& ctx, Value** args) {
  const char* op = "_pdist_forward";
  const Tensor& in = args[0]->tensor;  // (N, M)
  const double p = args[1]->d;
  Tensor& out = args[2]->tensor;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e != Error::Ok) return e;
  if (in.dim != 2) {
    char buf[128];
    return ctx.fail(Error::InvalidArgument, "%s: input has shape %s, expected (N, M)", op,
                    shape_string(in.sizes, in.dim, buf, sizeof buf));
  }
  if (!(p >= 0))
    return ctx.fail(Error::InvalidArgument, "%s: p is %g, expected a non-negative value", op, p);
  const int64_t n = in.sizes[0], m = in.sizes[1], pairs = n * (n - 1) / 2;
  e = detail::resize_output(ctx, op, out, &pairs, 1);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e != Error::Ok) return;
    T* y = out.data_as<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) *y++ = detail::p_distance(x + i * m, x + j * m, m, p);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
