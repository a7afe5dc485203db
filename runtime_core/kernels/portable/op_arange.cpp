// aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
// aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
// aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
#include <cmath>

#include "convert.h"
#include "shape_util.h"

namespace pocket {

// A Scalar as an int64 (doubles truncated), or false when it does not fit.
static bool scalar_to_int64(const Value& v, int64_t* out) {
  if (v.tag != Value::Tag::Double) {
    *out = v.tag == Value::Tag::Int ? v.i : (v.b ? 1 : 0);
    return true;
  }
  if (!(v.d >= -9223372036854775808.0 && v.d < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(v.d);
  return true;
}

static Error check_range(KernelContext& ctx, double start, double end, double step, double length) {
  if (step == 0) return ctx.fail(Error::InvalidArgument, "arange: step must be nonzero");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    return ctx.fail(Error::InvalidArgument,
                    "arange: upper bound and lower bound are inconsistent with step sign");
  if (!(length < 281474976710656.0))  // 2^48, the most elements a tensor may have
    return ctx.fail(Error::OutOfRange, "arange: %g elements are too many", length);
  return Error::Ok;
}

// Integral outputs count in int64 (scalars truncated), floating ones compute start + i * step
// in double, as torch does; the length is ceil((end - start) / step).
static Error arange(KernelContext& ctx, const Value& start, const Value& end, const Value& step,
                    const Value& dtype, Tensor& out) {
  const char* op = "arange";
  Error e = detail::check_dtype_arg(ctx, op, dtype, nullptr, out);
  if (e != Error::Ok) return e;
  if (out.dtype == ScalarType::Bool)
    return ctx.fail(Error::Unsupported, "%s: bool output is not supported", op);
  if (detail::is_integral(out.dtype)) {
    int64_t a = 0, b = 0, by = 0, diff = 0;
    if (!scalar_to_int64(start, &a) || !scalar_to_int64(end, &b) || !scalar_to_int64(step, &by) ||
        __builtin_sub_overflow(b, a, &diff))
      return ctx.fail(Error::InvalidArgument, "%s: start, end or step is out of int64 range", op);
    e = check_range(ctx, static_cast<double>(a), static_cast<double>(b), static_cast<double>(by),
                    std::ceil(static_cast<double>(diff) / static_cast<double>(by)));
    if (e != Error::Ok) return e;
    int64_t n = diff / by + (diff % by != 0 ? 1 : 0);
    e = detail::resize_output(ctx, op, out, &n, 1);
    if (e != Error::Ok) return e;
    // In unsigned arithmetic i * by may wrap, but a + i * by lies between start and end.
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = static_cast<uint64_t>(a) + static_cast<uint64_t>(i) * static_cast<uint64_t>(by);
      detail::store_int64(out.data, out.dtype, i, static_cast<int64_t>(v));
    }
    return Error::Ok;
  }
  double a = start.to_double(), b = end.to_double(), by = step.to_double();
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(by))
    return ctx.fail(Error::InvalidArgument, "%s: start, end and step must be finite", op);
  e = check_range(ctx, a, b, by, std::ceil((b - a) / by));
  if (e != Error::Ok) return e;
  int64_t n = static_cast<int64_t>(std::ceil((b - a) / by));
  e = detail::resize_output(ctx, op, out, &n, 1);
  if (e != Error::Ok) return e;
  for (int64_t i = 0; i < n; ++i)
    detail::store_double(out.data, out.dtype, i, a + static_cast<double>(i) * by);
  return Error::Ok;
}

static Value int_value(int64_t v) {
  Value x;
  x.tag = Value::Tag::Int;
  x.i = v;
  return x;
}

Error op_arange(KernelContext& ctx, Value** args) {
  return arange(ctx, int_value(0), *args[0], int_value(1), *args[1], args[5]->tensor);
}

Error op_arange_start(KernelContext& ctx, Value** args) {
  return arange(ctx, *args[0], *args[1], int_value(1), *args[2], args[6]->tensor);
}

Error op_arange_start_step(KernelContext& ctx, Value** args) {
  return arange(ctx, *args[0], *args[1], *args[2], *args[3], args[7]->tensor);
}

}  // namespace pocket
