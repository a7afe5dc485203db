// The extreme (max or min) of a reduction, its index, or both; NaN counts as the extreme,
// as in torch:
// aten::max(Tensor self) -> Tensor
// aten::min(Tensor self) -> Tensor
// aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
// aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
// aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
// aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
// aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
// aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
#include "reduce_util.h"

namespace pocket {
namespace {

// Sizes `values` and `indices` (either may be null) for `plan` and writes the extreme of each
// reduced group and its index there.
Error write_extremes(KernelContext& ctx, const char* op, const Tensor& in, const detail::ReducePlan& plan,
                     bool want_max, Tensor* values, Tensor* indices) {
  Error e = detail::expect_nonempty_reduction(ctx, op, plan);
  if (e == Error::Ok && values != nullptr)
    e = detail::resize_output(ctx, op, *values, plan.out_sizes, plan.out_dim);
  if (e == Error::Ok && indices != nullptr)
    e = detail::resize_output(ctx, op, *indices, plan.out_sizes, plan.out_dim);
  if (e != Error::Ok) return e;
  int64_t* idx = indices != nullptr ? indices->data_as<int64_t>() : nullptr;
  return detail::dispatch_dtype(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* val = values != nullptr ? values->data_as<T>() : nullptr;
    detail::for_each_extreme(in.data_as<const T>(), plan, want_max, [&](int64_t o, T v, int64_t i) {
      if (val != nullptr) val[o] = v;
      if (idx != nullptr) idx[o] = i;
    });
  });
}

// max, min: the extreme of every element, a 0-d tensor.
Error extreme_all(KernelContext& ctx, Value** args, const char* op, bool want_max) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[1]->tensor;
  Error e = detail::expect_dtype(ctx, op, "output", out, in.dtype);
  if (e != Error::Ok) return e;
  detail::ReducePlan plan;
  detail::plan_reduce_all(in, /*keepdim=*/false, &plan);
  return write_extremes(ctx, op, in, plan, want_max, &out, nullptr);
}

// max.dim, min.dim: values and their indices along one dim.
Error extreme_dim(KernelContext& ctx, Value** args, const char* op, bool want_max) {
  const Tensor& in = args[0]->tensor;
  Tensor& values = args[3]->tensor;
  Tensor& indices = args[4]->tensor;
  Error e = detail::expect_dtype(ctx, op, "values", values, in.dtype);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "indices", indices, ScalarType::Int64);
  detail::ReducePlan plan;
  if (e == Error::Ok) e = detail::plan_reduce_dim(ctx, op, in, args[1]->i, args[2]->b, &plan);
  return e != Error::Ok ? e : write_extremes(ctx, op, in, plan, want_max, &values, &indices);
}

// amax, amin: values over a list of dims (all dims when empty).
Error extreme_dims(KernelContext& ctx, Value** args, const char* op, bool want_max) {
  const Tensor& in = args[0]->tensor;
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, op, "output", out, in.dtype);
  detail::ReducePlan plan;
  if (e == Error::Ok) e = detail::plan_reduce(ctx, op, in, *args[1], args[2]->b, &plan);
  return e != Error::Ok ? e : write_extremes(ctx, op, in, plan, want_max, &out, nullptr);
}

// argmax, argmin: indices along one dim, or into the flattened tensor when dim is None.
Error extreme_index(KernelContext& ctx, Value** args, const char* op, bool want_max) {
  const Tensor& in = args[0]->tensor;
  bool keepdim = args[2]->b;
  Tensor& out = args[3]->tensor;
  Error e = detail::expect_dtype(ctx, op, "output", out, ScalarType::Int64);
  detail::ReducePlan plan;
  if (e == Error::Ok && args[1]->is_none())
    detail::plan_reduce_all(in, keepdim, &plan);
  else if (e == Error::Ok)
    e = detail::plan_reduce_dim(ctx, op, in, args[1]->i, keepdim, &plan);
  return e != Error::Ok ? e : write_extremes(ctx, op, in, plan, want_max, nullptr, &out);
}

}  // namespace

Error op_max(KernelContext& ctx, Value** args) { return extreme_all(ctx, args, "max", true); }
Error op_min(KernelContext& ctx, Value** args) { return extreme_all(ctx, args, "min", false); }
Error op_max_dim(KernelContext& ctx, Value** args) { return extreme_dim(ctx, args, "max.dim", true); }
Error op_min_dim(KernelContext& ctx, Value** args) { return extreme_dim(ctx, args, "min.dim", false); }
Error op_amax(KernelContext& ctx, Value** args) { return extreme_dims(ctx, args, "amax", true); }
Error op_amin(KernelContext& ctx, Value** args) { return extreme_dims(ctx, args, "amin", false); }
Error op_argmax(KernelContext& ctx, Value** args) { return extreme_index(ctx, args, "argmax", true); }
Error op_argmin(KernelContext& ctx, Value** args) { return extreme_index(ctx, args, "argmin", false); }

}  // namespace pocket
