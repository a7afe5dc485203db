// Python's int arithmetic and comparisons on symbolic sizes (the sym:: ops the exporter
// emits for dynamic shapes); overflow of int64 and division by zero are errors:
// sym::add, sym::sub, sym::mul, sym::floordiv, sym::mod (int a, int b) -> int
// sym::neg(int a) -> int
// sym::max, sym::min (int a, int b) -> int
// sym::eq, sym::ne, sym::lt, sym::le, sym::gt, sym::ge (int a, int b) -> bool
// pocket::check_size(int size, int expected, str what, str expected_what): fails unless the
//   two are equal. The exporter emits it for input dims torch.export found equal (one Dim
//   given to several inputs, or derived from another), which the per-input bounds cannot see.
#include <cstdint>

#include "pocket/kernel.h"

namespace pocket {
namespace {

Error overflow(KernelContext& ctx, const char* op, const char* sign, Value** args) {
  return ctx.fail(Error::OutOfRange, "sym::%s: %lld %s %lld overflows int64", op, static_cast<long long>(args[0]->i),
                  sign, static_cast<long long>(args[1]->i));
}

}  // namespace

Error op_sym_add(KernelContext& ctx, Value** args) {
  return __builtin_add_overflow(args[0]->i, args[1]->i, &args[2]->i) ? overflow(ctx, "add", "+", args) : Error::Ok;
}

Error op_sym_sub(KernelContext& ctx, Value** args) {
  return __builtin_sub_overflow(args[0]->i, args[1]->i, &args[2]->i) ? overflow(ctx, "sub", "-", args) : Error::Ok;
}

Error op_sym_mul(KernelContext& ctx, Value** args) {
  return __builtin_mul_overflow(args[0]->i, args[1]->i, &args[2]->i) ? overflow(ctx, "mul", "*", args) : Error::Ok;
}

// Python's a // b: rounds toward negative infinity.
Error op_sym_floordiv(KernelContext& ctx, Value** args) {
  int64_t a = args[0]->i, b = args[1]->i;
  if (b == 0)
    return ctx.fail(Error::InvalidArgument, "sym::floordiv: %lld // 0 divides by zero", static_cast<long long>(a));
  if (b == -1 && a == INT64_MIN) return overflow(ctx, "floordiv", "//", args);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  args[2]->i = q;
  return Error::Ok;
}

// Python's a % b: the result has the sign of b.
Error op_sym_mod(KernelContext& ctx, Value** args) {
  int64_t a = args[0]->i, b = args[1]->i;
  if (b == 0)
    return ctx.fail(Error::InvalidArgument, "sym::mod: %lld %% 0 divides by zero", static_cast<long long>(a));
  int64_t r = b == -1 ? 0 : a % b;  // INT64_MIN % -1 is undefined in C++
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  args[2]->i = r;
  return Error::Ok;
}

Error op_sym_neg(KernelContext& ctx, Value** args) {
  if (__builtin_sub_overflow(int64_t{0}, args[0]->i, &args[1]->i))
    return ctx.fail(Error::OutOfRange, "sym::neg: -(%lld) overflows int64", static_cast<long long>(args[0]->i));
  return Error::Ok;
}

Error op_sym_max(KernelContext&, Value** args) {
  args[2]->i = args[0]->i > args[1]->i ? args[0]->i : args[1]->i;
  return Error::Ok;
}

Error op_sym_min(KernelContext&, Value** args) {
  args[2]->i = args[0]->i < args[1]->i ? args[0]->i : args[1]->i;
  return Error::Ok;
}

// clang-format off
Error op_sym_eq(KernelContext&, Value** args) { args[2]->b = args[0]->i == args[1]->i; return Error::Ok; }
Error op_sym_ne(KernelContext&, Value** args) { args[2]->b = args[0]->i != args[1]->i; return Error::Ok; }
Error op_sym_lt(KernelContext&, Value** args) { args[2]->b = args[0]->i < args[1]->i; return Error::Ok; }
Error op_sym_le(KernelContext&, Value** args) { args[2]->b = args[0]->i <= args[1]->i; return Error::Ok; }
Error op_sym_gt(KernelContext&, Value** args) { args[2]->b = args[0]->i > args[1]->i; return Error::Ok; }
Error op_sym_ge(KernelContext&, Value** args) { args[2]->b = args[0]->i >= args[1]->i; return Error::Ok; }
// clang-format on

Error op_check_size(KernelContext& ctx, Value** args) {
  const int64_t size = args[0]->i, expected = args[1]->i;
  if (size == expected) return Error::Ok;
  const auto& what = args[2]->str;
  const auto& expected_what = args[3]->str;
  return ctx.fail(Error::InvalidArgument, "%.*s is %lld, but the model was exported with it equal to %.*s, which is %lld",
                  static_cast<int>(what.size), what.data, static_cast<long long>(size),
                  static_cast<int>(expected_what.size), expected_what.data, static_cast<long long>(expected));
}

}  // namespace pocket
