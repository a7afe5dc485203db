// aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
//
// Indices are flat positions (d * H + h) * W + w within each input volume, as in ATen.
#include "pool_util.h"

namespace pocket {

Error op_max_pool3d_with_indices(KernelContext& ctx, Value** args) {
  const char* op = "max_pool3d_with_indices";
  const Tensor& in = args[0]->tensor;  // (C, D, H, W) or (N, C, D, H, W)
  Tensor& out = args[6]->tensor;
  Tensor& indices = args[7]->tensor;
  detail::PoolNd p;
  Error e = detail::expect_float_io(ctx, op, in, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "indices", indices, ScalarType::Int64);
  if (e == Error::Ok)
    e = detail::plan_pool_nd(ctx, op, in, 3, args[1]->int_list, args[2]->int_list, args[3]->int_list,
                             &args[4]->int_list, args[5]->b, &p);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, p.out_sizes, p.dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, indices, p.out_sizes, p.dim);
  if (e != Error::Ok) return e;
  Error dispatched = detail::dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = nullptr;
    e = detail::contiguous_data(ctx, op, "input", in, &x);
    if (e == Error::Ok) detail::max_pool_nd(x, out.data_as<T>(), indices.data_as<int64_t>(), p);
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
