// sym::ge(int a, int b) -> bool: Python's a >= b on symbolic sizes
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_ge(KernelContext& ctx, Value** args) {
  args[2]->b = args[0]->i >= args[1]->i;
  return Error::Ok;
}

}  // namespace pocket
