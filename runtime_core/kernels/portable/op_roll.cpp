// aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
#include "shape_util.h"

namespace pocket {

// Reverses n elements of `es` bytes in place.
static void reverse_elements(char* p, int64_t n, size_t es) {
  char tmp[8];
  for (int64_t i = 0, j = n - 1; i < j; ++i, --j) {
    detail::copy_element(tmp, p + i * static_cast<int64_t>(es), es);
    detail::copy_element(p + i * static_cast<int64_t>(es), p + j * static_cast<int64_t>(es), es);
    detail::copy_element(p + j * static_cast<int64_t>(es), tmp, es);
  }
}

// Python's a % n for n > 0.
static int64_t positive_mod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

// Without dims, rolls the flattened tensor: copy it, then rotate right by s in place
// (three reversals).
static Error roll_flat(KernelContext& ctx, const Tensor& self, int64_t shift, Tensor& out) {
  Error e = detail::copy_to_output(ctx, "roll", self, out, self.sizes, self.dim);
  int64_t n = out.numel();
  if (e != Error::Ok || n == 0) return e;
  int64_t s = positive_mod(shift, n);
  size_t es = element_size(out.dtype);
  char* p = static_cast<char*>(out.data);
  reverse_elements(p, n, es);
  reverse_elements(p, s, es);
  reverse_elements(p + s * static_cast<int64_t>(es), n - s, es);
  return Error::Ok;
}

// Each rolled dim splits into two pieces, [0, n - s) moving to [s, n) and [n - s, n) to
// [0, s); every combination of pieces is one strided block copy.
Error op_roll(KernelContext& ctx, Value** args) {
  const Tensor& self = args[0]->tensor;
  const IntList& shifts = args[1]->int_list;
  const IntList& dims = args[2]->int_list;
  Tensor& out = args[3]->tensor;
  if (dims.size == 0 && shifts.size == 1) return roll_flat(ctx, self, shifts[0], out);
  if (dims.size != shifts.size || dims.size == 0)
    return ctx.fail(Error::InvalidArgument, "roll: %zu shifts given for %zu dims", shifts.size,
                    dims.size);
  int64_t shift[kMaxDim] = {};
  for (size_t i = 0; i < dims.size; ++i) {
    int d = 0;
    Error e = detail::normalize_dim(ctx, "roll", dims[i], self.dim, &d);
    if (e != Error::Ok) return e;
    if (self.dim > 0 && self.sizes[d] > 0)
      shift[d] = positive_mod(positive_mod(shifts[i], self.sizes[d]) + shift[d], self.sizes[d]);
  }
  Error e = detail::expect_same_dtype(ctx, "roll", self, out);
  if (e == Error::Ok) e = detail::resize_output(ctx, "roll", out, self.sizes, self.dim);
  if (e != Error::Ok || out.numel() == 0) return e;
  for (int pieces = 0; pieces < (1 << self.dim); ++pieces) {
    Tensor src = self, dst = out;
    int64_t src_offset = 0, dst_offset = 0;
    bool skip = false;
    for (int d = 0; d < self.dim; ++d) {
      int64_t n = self.sizes[d], s = shift[d];
      bool second = (pieces >> d) & 1;
      if (second && s == 0) skip = true;  // an unrolled dim is a single piece
      src.sizes[d] = dst.sizes[d] = second ? s : n - s;
      src_offset += (second ? n - s : 0) * self.strides[d];
      dst_offset += (second ? 0 : s) * out.strides[d];
    }
    if (skip) continue;
    src.data = detail::element_ptr(self, src_offset);
    dst.data = detail::element_ptr(out, dst_offset);
    detail::copy_elements(dst, src);
  }
  return Error::Ok;
}

}  // namespace pocket
