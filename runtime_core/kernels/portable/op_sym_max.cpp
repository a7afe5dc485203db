// sym::max(int a, int b) -> int
#include "pocket/kernel.h"

namespace pocket {

Error op_sym_max(KernelContext& ctx, Value** args) {
  args[2]->i = args[0]->i > args[1]->i ? args[0]->i : args[1]->i;
  return Error::Ok;
}

}  // namespace pocket
