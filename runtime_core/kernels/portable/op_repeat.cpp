// aten::repeat(Tensor self, SymInt[] repeats) -> Tensor
#include "shape_util.h"

namespace pocket {

// Tiles self repeats[d] times along each dim (self gains leading size-1 dims when repeats
// is longer). out[c] = self[c % size] per dim; each output row repeats one input row.
Error op_repeat(KernelContext& ctx, Value** args) {
  const char* op = "repeat";
  const Tensor& self = args[0]->tensor;
  const IntList& repeats = args[1]->int_list;
  Tensor& out = args[2]->tensor;
  int n = static_cast<int>(repeats.size);
  if (repeats.size > static_cast<size_t>(kMaxDim) || n < self.dim)
    return ctx.fail(Error::InvalidArgument, "%s: %zu repeats given for a %d-d tensor", op,
                    repeats.size, self.dim);
  int64_t in_sizes[kMaxDim], in_strides[kMaxDim], sizes[kMaxDim];
  for (int d = 0; d < n; ++d) {
    int sd = d - (n - self.dim);
    in_sizes[d] = sd < 0 ? 1 : self.sizes[sd];
    in_strides[d] = sd < 0 ? 0 : self.strides[sd];
    if (repeats[d] < 0 || __builtin_mul_overflow(in_sizes[d], repeats[d], &sizes[d]))
      return ctx.fail(Error::InvalidArgument, "%s: invalid repeat count %lld at dim %d", op,
                      static_cast<long long>(repeats[d]), d);
  }
  Error e = detail::expect_same_dtype(ctx, op, self, out);
  if (e == Error::Ok) e = detail::resize_output(ctx, op, out, sizes, n);
  if (e != Error::Ok) return e;
  if (out.numel() == 0) return Error::Ok;
  if (n == 0) {
    detail::copy_elements(out, self);
    return Error::Ok;
  }
  int64_t outer = out.numel() / sizes[n - 1];
  int64_t row = in_sizes[n - 1];
  int64_t coord[kMaxDim] = {0};
  int64_t pos = 0;
  for (int64_t k = 0; k < outer; ++k) {
    int64_t offset = 0;
    for (int d = 0; d < n - 1; ++d) offset += (coord[d] % in_sizes[d]) * in_strides[d];
    Tensor src = detail::make_view(self, offset, &row, &in_strides[n - 1], 1);
    for (int64_t r = 0; r < repeats[n - 1]; ++r, pos += row)
      detail::copy_elements(detail::make_view(out, pos, &row, nullptr, 1), src);
    for (int d = n - 2; d >= 0 && ++coord[d] == sizes[d]; --d) coord[d] = 0;
  }
  return Error::Ok;
}

}  // namespace pocket
