// aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
#include "shape_util.h"

namespace pocket {

// Size-1 dims (and new leading dims) repeat through stride 0; -1 keeps a dim's size.
Error op_expand(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const IntList& size = args[1]->int_list;
  Tensor& out = args[3]->tensor;
  int n = static_cast<int>(size.size);
  if (size.size > static_cast<size_t>(kMaxDim) || n < self.dim)
    return ctx.fail(Error::InvalidArgument, "expand: %zu sizes given for a %d-d tensor", size.size,
                    self.dim);
  Tensor view = self;
  view.dim = n;
  for (int i = 0; i < n; ++i) {
    int sd = i - (n - self.dim);
    int64_t want = size[i];
    int64_t have = sd < 0 ? 1 : self.sizes[sd];
    if (sd >= 0 && want == -1) want = have;
    if (want < 0 || (have != want && have != 1))
      return ctx.fail(Error::InvalidArgument,
                      "expand: size %lld at dim %d does not match the existing size %lld",
                      static_cast<long long>(size[i]), i, static_cast<long long>(have));
    view.sizes[i] = want;
    view.strides[i] = (sd < 0 || have != want) ? 0 : self.strides[sd];
  }
  return detail::copy_to_output(ctx, "expand", view, out, view.sizes, view.dim);
}

}  // namespace pocket
