// sym::neg(int a) -> int: Python's -a on symbolic sizes
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_neg(KernelContext& ctx, Value** args) {
  if (__builtin_sub_overflow(int64_t{0}, args[0]->i, &args[1]->i))
    return ctx.fail(Error::OutOfRange, "sym::neg: -(%lld) overflows int64",
                    static_cast<long long>(args[0]->i));
  return Error::Ok;
}

}  // namespace pocket
