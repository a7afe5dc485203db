// sym::mod(int a, int b) -> int: Python's a % b (the result has the sign of b)
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_mod(KernelContext& ctx, Value** args) {
  int64_t a = args[0]->i, b = args[1]->i;
  if (b == 0)
    return ctx.fail(Error::InvalidArgument, "sym::mod: %lld %% 0 divides by zero",
                    static_cast<long long>(a));
  int64_t r = b == -1 ? 0 : a % b;  // INT64_MIN % -1 is undefined in C++
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  args[2]->i = r;
  return Error::Ok;
}

}  // namespace pocket
