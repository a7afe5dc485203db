// sym::mul(int a, int b) -> int: Python's a * b on symbolic sizes
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_mul(KernelContext& ctx, Value** args) {
  if (__builtin_mul_overflow(args[0]->i, args[1]->i, &args[2]->i))
    return ctx.fail(Error::OutOfRange, "sym::mul: %lld * %lld overflows int64",
                    static_cast<long long>(args[0]->i), static_cast<long long>(args[1]->i));
  return Error::Ok;
}

}  // namespace pocket
