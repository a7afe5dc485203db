// aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
#include "shape_util.h"

namespace pocket {

// Offset (in elements) of source's k-th element in row-major order.
static int64_t row_major_offset(const Tensor& t, int64_t k) {
  int64_t offset = 0;
  for (int d = t.dim - 1; d >= 0; --d) {
    offset += (k % t.sizes[d]) * t.strides[d];
    k /= t.sizes[d];
  }
  return offset;
}

// out = self, broadcast with mask, where the true places of mask take source's elements in
// order (source's shape does not matter, only that it has enough of them).
Error op_masked_scatter(KernelContext& ctx, Value** args) {
  const char* op = "masked_scatter";
  const Tensor &self = args[0]->tensor, &mask = args[1]->tensor, &source = args[2]->tensor;
  Tensor& out = args[3]->tensor;
  const Tensor* ins[2] = {&self, &mask};
  int64_t sizes[kMaxDim];
  int dim = 0;
  Error e = detail::expect_dtype(ctx, op, "mask", mask, ScalarType::Bool);
  if (e == Error::Ok) e = detail::expect_same_dtype(ctx, op, self, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, op, "source", source, self.dtype);
  if (e == Error::Ok) e = detail::broadcast_shapes(ctx, op, ins, 2, sizes, &dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  int64_t strides[2][kMaxDim];
  detail::broadcast_strides(self, sizes, dim, strides[0]);
  detail::broadcast_strides(mask, sizes, dim, strides[1]);
  int64_t needed = 0;  // counted first, so that a failing call writes nothing
  detail::for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) { needed += mask.data_as<bool>()[o[1]]; });
  if (needed > source.numel())
    return ctx.fail(Error::InvalidArgument, "%s: mask has %lld true elements but source only %lld", op,
                    static_cast<long long>(needed), static_cast<long long>(source.numel()));
  const size_t es = element_size(out.dtype);
  const bool* m = mask.data_as<bool>();
  char* dst = static_cast<char*>(out.data);
  int64_t k = 0;
  detail::for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    const char* src = m[o[1]] ? detail::element_ptr(source, row_major_offset(source, k++))
                              : detail::element_ptr(self, o[0]);
    detail::copy_element(dst, src, es);
    dst += es;
  });
  return Error::Ok;
}

}  // namespace pocket
