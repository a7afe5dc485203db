// aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
// aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
// aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor
#include "convert.h"
#include "scatter_util.h"
#include "shape_util.h"

namespace pocket {

// out = self, then out[index[i][j]][j] = src[i][j] for dim 0 (likewise for other dims).
// `src` is null for scatter.value, which writes `element` everywhere instead.
static Error scatter(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                     const Tensor& index, const Tensor* src, const void* element, Tensor& out) {
  int d = 0;
  Error e = detail::scatter_prepare(ctx, op, self, dim, index, src, out, &d);
  if (e != Error::Ok) return e;
  size_t es = element_size(out.dtype);
  return detail::scatter_walk(ctx, op, d, index, src, out, [&](int64_t o, int64_t s) {
    const char* from = src != nullptr ? detail::element_ptr(*src, s) : static_cast<const char*>(element);
    detail::copy_element(detail::element_ptr(out, o), from, es);
  });
}

Error op_scatter_src(KernelContext& ctx, Value** args) {
  return scatter(ctx, "scatter", args[0]->tensor, args[1]->i, args[2]->tensor, &args[3]->tensor,
                 nullptr, args[4]->tensor);
}

Error op_scatter_value(KernelContext& ctx, Value** args) {
  Tensor& out = args[4]->tensor;
  alignas(8) unsigned char element[8];
  Error e = detail::scalar_to_element(ctx, "scatter", *args[3], out.dtype, element);
  if (e != Error::Ok) return e;
  return scatter(ctx, "scatter", args[0]->tensor, args[1]->i, args[2]->tensor, nullptr, element,
                 out);
}

// The older reducing form: reduce is "add" or "multiply", self included.
Error op_scatter_reduce(KernelContext& ctx, Value** args) {
  detail::ScatterReduce r;
  Error e = detail::parse_scatter_reduce(ctx, "scatter", *args[4], &r);
  if (e == Error::Ok && r != detail::ScatterReduce::Sum && r != detail::ScatterReduce::Prod)
    return ctx.fail(Error::InvalidArgument, "scatter: reduce must be add or multiply");
  if (e != Error::Ok) return e;
  return detail::scatter_reduce(ctx, "scatter", args[0]->tensor, args[1]->i, args[2]->tensor,
                                args[3]->tensor, r, /*include_self=*/true, args[5]->tensor);
}

}  // namespace pocket
