// The lower or upper triangle of the last two dims; the rest is zeroed:
// aten::tril(Tensor self, SymInt diagonal=0) -> Tensor     keeps j - i <= diagonal
// aten::triu(Tensor self, SymInt diagonal=0) -> Tensor     keeps j - i >= diagonal
#include "shape_util.h"

namespace pocket {
namespace {

Error triangle(KernelContext& ctx, Value** args, const char* op, bool lower) {
  const Tensor& self = args[0]->tensor;
  Tensor& out = args[2]->tensor;
  if (self.dim < 2)
    return ctx.fail(Error::InvalidArgument, "%s: expected a tensor with at least 2 dims, got %d", op, self.dim);
  Error e = detail::copy_to_output(ctx, op, self, out, self.sizes, self.dim);
  if (e != Error::Ok) return e;
  int64_t rows = self.sizes[self.dim - 2], cols = self.sizes[self.dim - 1];
  if (rows == 0 || cols == 0) return Error::Ok;
  int64_t k = args[1]->i;
  k = k < -rows ? -rows : (k > cols ? cols : k);  // beyond these, nothing changes
  int64_t es = static_cast<int64_t>(element_size(out.dtype));
  int64_t matrices = out.numel() / (rows * cols);
  char* p = static_cast<char*>(out.data);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i, p += cols * es) {
      // Row i keeps columns [0, i + k] (lower) or [i + k, cols) (upper).
      int64_t edge = lower ? i + k + 1 : i + k;
      edge = edge < 0 ? 0 : (edge > cols ? cols : edge);
      if (lower)
        std::memset(p + edge * es, 0, static_cast<size_t>((cols - edge) * es));
      else
        std::memset(p, 0, static_cast<size_t>(edge * es));
    }
  }
  return Error::Ok;
}

}  // namespace

Error op_tril(KernelContext& ctx, Value** args) { return triangle(ctx, args, "tril", true); }
Error op_triu(KernelContext& ctx, Value** args) { return triangle(ctx, args, "triu", false); }

}  // namespace pocket
