#include "elementwise_util.h"

#include <cstring>

namespace pocket {
namespace detail {

Error check_supported(KernelContext& ctx, const char* op, const Tensor& t) {
  if (t.dtype != ScalarType::Float16 && t.dtype != ScalarType::BFloat16 &&
      is_valid_scalar_type(static_cast<int>(t.dtype)))
    return Error::Ok;
  return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported by the portable kernels", op,
                  scalar_type_name(t.dtype));
}

// Order of the integer dtypes for promotion (int8 and uint8 need care: see promote_types).
static int integer_rank(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 0;
    case ScalarType::UInt8:
    case ScalarType::Int8: return 1;
    case ScalarType::Int16: return 2;
    case ScalarType::Int32: return 3;
    default: return 4;
  }
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (is_floating(a) || is_floating(b)) {
    if (!is_floating(b)) return a;
    if (!is_floating(a)) return b;
    // Mixed float widths: float64 wins; float16 with bfloat16 (or float32) gives float32.
    return a == ScalarType::Float64 || b == ScalarType::Float64 ? ScalarType::Float64
                                                                 : ScalarType::Float32;
  }
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  if (integer_rank(a) == 1 && integer_rank(b) == 1) return ScalarType::Int16;  // int8, uint8
  return integer_rank(a) > integer_rank(b) ? a : b;
}

// torch's combine_categories: `higher` comes from tensors with dims, `lower` from 0-d tensors
// or Scalars, which only count when they are of a higher category.
static ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

ScalarType promote_tensors(const Tensor& a, const Tensor& b) {
  if ((a.dim == 0) == (b.dim == 0)) return promote_types(a.dtype, b.dtype);
  return a.dim > 0 ? combine_categories(a.dtype, b.dtype) : combine_categories(b.dtype, a.dtype);
}

ScalarType promote_with_scalar(ScalarType t, const Value& s) {
  ScalarType wrapped = s.tag == Value::Tag::Double ? ScalarType::Float32
                       : s.tag == Value::Tag::Int  ? ScalarType::Int64
                                                   : ScalarType::Bool;
  return combine_categories(t, wrapped);
}

bool string_is(const Value& v, const char* s) {
  return v.tag == Value::Tag::String && v.str.size == strlen(s) &&
         memcmp(v.str.data, s, v.str.size) == 0;
}

ScalarTensor::ScalarTensor(const Value& s, ScalarType dtype) {
  tensor_.dtype = dtype;
  tensor_.dim = 0;
  tensor_.data = storage_;
  tensor_.capacity = sizeof storage_;
  if (s.tag == Value::Tag::Int) store_as<int64_t>(storage_, dtype, 0, s.i);
  if (s.tag == Value::Tag::Double) store_as<double>(storage_, dtype, 0, s.d);
  if (s.tag == Value::Tag::Bool) store_as<bool>(storage_, dtype, 0, s.b);
}

const char* kinds_name(Kinds k) {
  switch (k) {
    case Kinds::All: return "a float32, float64, integer or bool dtype";
    case Kinds::Numeric: return "float32, float64 or an integer dtype";
    case Kinds::Floating: return "float32 or float64";
    case Kinds::Integral: return "an integer or bool dtype";
  }
  return "";
}

Error broadcast_inputs(KernelContext& ctx, const char* op, const Tensor* const* ins, int n,
                       Tensor& out, int64_t (*strides)[kMaxDim]) {
  for (int k = 0; k < n; ++k) {
    Error e = check_supported(ctx, op, *ins[k]);
    if (e != Error::Ok) return e;
  }
  Error e = check_supported(ctx, op, out);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  int dim = 0;
  e = broadcast_shapes(ctx, op, ins, n, sizes, &dim);
  if (e == Error::Ok) e = resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  for (int k = 0; k < n; ++k) broadcast_strides(*ins[k], sizes, dim, strides[k]);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
