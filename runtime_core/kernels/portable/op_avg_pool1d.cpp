// aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_avg_pool1d(KernelContext& ctx, Value** args) {
  const char* op = "avg_pool1d";
  const Tensor& in = args[0]->tensor;  // (C, L) or (N, C, L)
  Tensor& out = args[6]->tensor;
  detail::PoolNd p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok)
    e = detail::plan_pool_nd(ctx, op, in, 1, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                             nullptr, args[4]->b, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) detail::avg_pool_nd(x, out.data_as<T>(), p, args[5]->b, 0);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
