// aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
#include "convert.h"
#include "shape_util.h"

namespace pocket {

// out = mask ? value : self, with self and mask broadcast together.
Error op_masked_fill_scalar(KernelContext& ctx, Value** args) {
  const char* op = "masked_fill";
  const Tensor& self = args[0]->tensor;
  const Tensor& mask = args[1]->tensor;
  Tensor& out = args[3]->tensor;
  const Tensor* ins[2] = {&self, &mask};
  int64_t sizes[kMaxDim];
  int dim = 0;
  alignas(8) unsigned char element[8];
  Error e = detail::expect_dtype(ctx, op, "mask", mask, ScalarType::Bool);
  if (e == Error::Ok) e = detail::expect_same_dtype(ctx, op, self, out);
  if (e == Error::Ok) e = detail::scalar_to_element(ctx, op, *args[2], out.dtype, element);
  if (e == Error::Ok) e = detail::broadcast_shapes(ctx, op, ins, 2, sizes, &dim);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  int64_t strides[2][kMaxDim];
  detail::broadcast_strides(self, sizes, dim, strides[0]);
  detail::broadcast_strides(mask, sizes, dim, strides[1]);
  size_t es = element_size(out.dtype);
  const bool* m = mask.data_as<bool>();
  char* dst = static_cast<char*>(out.data);
  const char* fill = reinterpret_cast<const char*>(element);
  detail::for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    detail::copy_element(dst, m[o[1]] ? fill : detail::element_ptr(self, o[0]), es);
    dst += es;
  });
  return Error::Ok;
}

}  // namespace pocket
