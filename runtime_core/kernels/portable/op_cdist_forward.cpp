// aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor
//
// x1 (B1..., P, M) and x2 (B2..., R, M) -> (B..., P, R), the p-norm distance of every row pair,
// with the batch dims B1 and B2 broadcast to B. compute_mode only picks ATen's algorithm for
// p = 2 (a matmul for large inputs); this kernel computes each distance directly.
#include "distance_util.h"
#include "nn_util.h"

namespace pocket {

namespace {

const char* const kOp = "_cdist_forward";

// The element offset of batch `b` (row-major over out_batch[0..nb)) within a tensor whose
// batch dims are `sizes` (right-aligned, size 1 broadcast) and whose matrices hold `mat` values.
int64_t batch_offset(int64_t b, const int64_t* out_batch, int nb, const int64_t* sizes, int n, int64_t mat) {
  int64_t offset = 0, stride = mat;
  for (int d = nb - 1; d >= 0; --d) {
    const int64_t coord = b % out_batch[d];
    b /= out_batch[d];
    const int k = d - (nb - n);
    if (k < 0) continue;
    if (sizes[k] != 1) offset += coord * stride;
    stride *= sizes[k];
  }
  return offset;
}

Error plan(KernelContext& ctx, const Tensor& x1, const Tensor& x2, double p, int64_t* out_sizes, int* nb) {
  char b1[128], b2[128];
  if (x1.dim < 2 || x2.dim < 2 || x1.sizes[x1.dim - 1] != x2.sizes[x2.dim - 1])
    return ctx.fail(Error::InvalidArgument, "%s: x1 %s and x2 %s must be (..., P, M) and (..., R, M)", kOp,
                    shape_string(x1.sizes, x1.dim, b1, sizeof b1), shape_string(x2.sizes, x2.dim, b2, sizeof b2));
  if (!(p >= 0)) return ctx.fail(Error::InvalidArgument, "%s: p is %g, expected a non-negative value", kOp, p);
  const int n1 = x1.dim - 2, n2 = x2.dim - 2;
  *nb = n1 > n2 ? n1 : n2;
  for (int d = 0; d < *nb; ++d) {
    const int k1 = d - (*nb - n1), k2 = d - (*nb - n2);
    const int64_t s1 = k1 >= 0 ? x1.sizes[k1] : 1, s2 = k2 >= 0 ? x2.sizes[k2] : 1;
    if (s1 != s2 && s1 != 1 && s2 != 1)
      return ctx.fail(Error::InvalidArgument, "%s: batch dims of x1 %s and x2 %s do not broadcast", kOp,
                      shape_string(x1.sizes, x1.dim, b1, sizeof b1), shape_string(x2.sizes, x2.dim, b2, sizeof b2));
    out_sizes[d] = s1 == 1 ? s2 : s1;
  }
  out_sizes[*nb] = x1.sizes[x1.dim - 2];
  out_sizes[*nb + 1] = x2.sizes[x2.dim - 2];
  return Error::Ok;
}

}  // namespace

Error op_cdist_forward(KernelContext& ctx, Value** args) {
  const Tensor &x1 = args[0]->tensor, &x2 = args[1]->tensor;
  const double p = args[2]->d;
  Tensor& out = args[4]->tensor;
  int64_t sizes[kMaxDim + 2];
  int nb = 0;
  Error e = detail::expect_float_io(ctx, kOp, x1, out);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, kOp, "x2", x2, x1.dtype);
  if (e == Error::Ok) e = plan(ctx, x1, x2, p, sizes, &nb);
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, out, sizes, nb + 2);
  if (e != Error::Ok) return e;
  const int64_t rows1 = sizes[nb], rows2 = sizes[nb + 1], m = x1.sizes[x1.dim - 1];
  int64_t batch = 1;
  for (int d = 0; d < nb; ++d) batch *= sizes[d];
  Error dispatched = detail::dispatch_float(ctx, kOp, x1.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *a = nullptr, *b = nullptr;
    e = detail::contiguous_data(ctx, kOp, "x1", x1, &a);
    if (e == Error::Ok) e = detail::contiguous_data(ctx, kOp, "x2", x2, &b);
    if (e != Error::Ok) return;
    T* y = out.data_as<T>();
    for (int64_t bi = 0; bi < batch; ++bi) {
      const T* ab = a + batch_offset(bi, sizes, nb, x1.sizes, x1.dim - 2, rows1 * m);
      const T* bb = b + batch_offset(bi, sizes, nb, x2.sizes, x2.dim - 2, rows2 * m);
      for (int64_t i = 0; i < rows1; ++i)
        for (int64_t j = 0; j < rows2; ++j) *y++ = detail::p_distance(ab + i * m, bb + j * m, m, p);
    }
  });
  return dispatched != Error::Ok ? dispatched : e;
}

}  // namespace pocket
