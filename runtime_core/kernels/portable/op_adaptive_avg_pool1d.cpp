// aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_adaptive_avg_pool1d(KernelContext& ctx, Value** args) {
  const char* op = "adaptive_avg_pool1d";
  const Tensor& in = args[0]->tensor;  // (C, L) or (N, C, L)
  Tensor& out = args[2]->tensor;
  detail::PoolNd p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = detail::plan_adaptive_pool(ctx, op, in, 1, args[1]->int_list, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) detail::adaptive_avg_pool_nd(x, out.data_as<T>(), p);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
