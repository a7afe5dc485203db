// sym::floordiv(int a, int b) -> int: Python's a // b (rounds toward negative infinity)
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_floordiv(KernelContext& ctx, Value** args) {
  int64_t a = args[0]->i, b = args[1]->i;
  if (b == 0)
    return ctx.fail(Error::InvalidArgument, "sym::floordiv: %lld // 0 divides by zero",
                    static_cast<long long>(a));
  if (b == -1 && a == INT64_MIN)
    return ctx.fail(Error::OutOfRange, "sym::floordiv: %lld // -1 overflows int64",
                    static_cast<long long>(a));
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  args[2]->i = q;
  return Error::Ok;
}

}  // namespace pocket
