// Integer and bool dtypes only, computed in the output's dtype (for bool: logical and, or,
// xor, not):
// aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor
// aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor
// aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
// aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor
// aten::bitwise_not(Tensor self) -> Tensor
#include <type_traits>

#include "elementwise_util.h"

namespace pocket {
namespace {

template <typename F>
Error bitwise(KernelContext& ctx, Value** args, const char* op, F f) {
  return detail::binary_overloads(ctx, args, [&](KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out) {
    return detail::binary_op<detail::Kinds::Integral>(c, op, out.dtype, a, b, out, f);
  });
}

constexpr auto kAnd = [](auto x, auto y) { return x & y; };
constexpr auto kOr = [](auto x, auto y) { return x | y; };
constexpr auto kXor = [](auto x, auto y) { return x ^ y; };

}  // namespace

Error op_bitwise_and_tensor(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_and", kAnd); }
Error op_bitwise_and_scalar(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_and", kAnd); }
Error op_bitwise_or_tensor(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_or", kOr); }
Error op_bitwise_or_scalar(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_or", kOr); }
Error op_bitwise_xor_tensor(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_xor", kXor); }
Error op_bitwise_xor_scalar(KernelContext& ctx, Value** args) { return bitwise(ctx, args, "bitwise_xor", kXor); }

Error op_bitwise_not(KernelContext& ctx, Value** args) {
  Tensor& out = args[1]->tensor;
  return detail::unary_op<detail::Kinds::Integral>(ctx, "bitwise_not", out.dtype, args[0]->tensor, out, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same<T, bool>::value) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  });
}

}  // namespace pocket
