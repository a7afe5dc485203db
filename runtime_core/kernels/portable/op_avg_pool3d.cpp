// aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
#include "pool_util.h"

namespace pocket {

Error op_avg_pool3d(KernelContext& ctx, Value** args) {
  const char* op = "avg_pool3d";
  const Tensor& in = args[0]->tensor;  // (C, D, H, W) or (N, C, D, H, W)
  const int64_t divisor_override = args[6]->is_none() ? 0 : args[6]->i;
  Tensor& out = args[7]->tensor;
  if (!args[6]->is_none() && divisor_override == 0)
    return ctx.fail(Error::InvalidArgument, "%s: divisor_override must be non-zero", op);
  detail::PoolNd p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok)
    e = detail::plan_pool_nd(ctx, op, in, 3, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                             nullptr, args[4]->b, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) detail::avg_pool_nd(x, out.data_as<T>(), p, args[5]->b, divisor_override);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
