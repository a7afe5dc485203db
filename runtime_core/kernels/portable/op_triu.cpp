// aten::triu(Tensor self, SymInt diagonal=0) -> Tensor
#include "shape_util.h"

namespace pocket {

// Keeps out[..., i, j] where j - i >= diagonal and zeroes the rest.
Error op_triu(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[2]->tensor;
  if (self.dim < 2)
    return ctx.fail(Error::InvalidArgument, "triu: expected a tensor with at least 2 dims, got %d",
                    self.dim);
  Error e = detail::copy_to_output(ctx, "triu", self, out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  int64_t rows = self.sizes[self.dim - 2], cols = self.sizes[self.dim - 1];
  if (rows == 0 || cols == 0) return Error::Ok;
  int64_t k = args[1]->i;
  k = k < -rows ? -rows : (k > cols ? cols : k);  // beyond these, nothing changes
  size_t es = element_size(out.dtype);
  int64_t matrices = out.numel() / (rows * cols);
  char* p = static_cast<char*>(out.data);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i, p += cols * static_cast<int64_t>(es)) {
      int64_t drop = i + k;  // columns [0, drop) are zeroed
      drop = drop < 0 ? 0 : (drop > cols ? cols : drop);
      std::memset(p, 0, static_cast<size_t>(drop) * es);
    }
  }
  return Error::Ok;
}

}  // namespace pocket
