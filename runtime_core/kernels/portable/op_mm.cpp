// aten::mm(Tensor self, Tensor mat2) -> Tensor
// aten::bmm(Tensor self, Tensor mat2) -> Tensor
// aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
//
// One strided matrix product serves all three, so transposed operands need no copy. The
// optimized kernels reuse the ops with their own product (mm_with, ... in parts.h).
#include "parallel_util.h"
#include "parts.h"

namespace pocket {
namespace detail {

namespace {

// Rows [r0, r1) of batch item `i` of c = a · b.
void matmul_rows(const Matmul& p, int64_t i, int64_t r0, int64_t r1) {
  const float* a = p.a + i * p.a_bs;
  const float* b = p.b + i * p.b_bs;
  for (int64_t r = r0; r < r1; ++r) {
    float* row = p.c + (i * p.m + r) * p.n;
    for (int64_t j = 0; j < p.n; ++j) row[j] = 0.0f;
    for (int64_t q = 0; q < p.k; ++q) {
      const float x = a[r * p.a_rs + q * p.a_cs];
      const float* brow = b + q * p.b_rs;
      if (p.b_cs == 1) {
        for (int64_t j = 0; j < p.n; ++j) row[j] += x * brow[j];
      } else {
        for (int64_t j = 0; j < p.n; ++j) row[j] += x * brow[j * p.b_cs];
      }
    }
  }
}

// The product of a (rows, cols) strided 2-d or 3-d tensor's last two dims with b's.
Matmul product(const Tensor& a, const Tensor& b, float* c, int batch_dims) {
  const int r = batch_dims, k = batch_dims + 1;
  Matmul p;
  p.batch = batch_dims ? a.sizes[0] : 1;
  p.m = a.sizes[r];
  p.k = a.sizes[k];
  p.n = b.sizes[k];
  p.a = a.data_as<const float>();
  p.a_bs = batch_dims ? a.strides[0] : 0;
  p.a_rs = a.strides[r];
  p.a_cs = a.strides[k];
  p.b = b.data_as<const float>();
  p.b_bs = batch_dims ? b.strides[0] : 0;
  p.b_rs = b.strides[r];
  p.b_cs = b.strides[k];
  p.c = c;
  return p;
}

Error check(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b, const Tensor& out, int dims) {
  for (const Tensor* t : {&a, &b, &out}) {
    Error e = expect_dtype(ctx, op, "tensor", *t, ScalarType::Float32);
    if (e != Error::Ok) return e;
  }
  char x[128], y[128];
  if (a.dim != dims || b.dim != dims || a.sizes[dims - 1] != b.sizes[dims - 2] ||
      (dims == 3 && a.sizes[0] != b.sizes[0]))
    return ctx.fail(Error::InvalidArgument, "%s: shapes %s and %s cannot be multiplied", op,
                    shape_string(a.sizes, a.dim, x, sizeof x), shape_string(b.sizes, b.dim, y, sizeof y));
  return Error::Ok;
}

}  // namespace

void matmul_portable(KernelContext& ctx, const Matmul& p) {
  // Parallel over all rows of all batch items.
  ctx.parallel_for(p.batch * p.m, grain_for(p.k * p.n), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end;) {
      const int64_t i = t / p.m, r0 = t % p.m;
      const int64_t r1 = r0 + (end - t) < p.m ? r0 + (end - t) : p.m;
      matmul_rows(p, i, r0, r1);
      t += r1 - r0;
    }
  });
}

Error mm_with(KernelContext& ctx, Value** args, MatmulFn matmul) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  Error e = check(ctx, "mm", a, b, out, 2);
  if (e != Error::Ok) return e;
  const int64_t sizes[2] = {a.sizes[0], b.sizes[1]};
  e = resize_output(ctx, "mm", out, sizes, 2);
  if (e != Error::Ok) return e;
  matmul(ctx, product(a, b, out.data_as<float>(), 0));
  return Error::Ok;
}

Error bmm_with(KernelContext& ctx, Value** args, MatmulFn matmul) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  Error e = check(ctx, "bmm", a, b, out, 3);
  if (e != Error::Ok) return e;
  const int64_t sizes[3] = {a.sizes[0], a.sizes[1], b.sizes[2]};
  e = resize_output(ctx, "bmm", out, sizes, 3);
  if (e != Error::Ok) return e;
  matmul(ctx, product(a, b, out.data_as<float>(), 1));
  return Error::Ok;
}

Error addmm_with(KernelContext& ctx, Value** args, MatmulFn matmul) {
  const Tensor& bias = args[0]->tensor;
  const Tensor& a = args[1]->tensor;
  const Tensor& b = args[2]->tensor;
  const float beta = static_cast<float>(args[3]->to_double());
  const float alpha = static_cast<float>(args[4]->to_double());
  Tensor& out = args[5]->tensor;
  Error e = check(ctx, "addmm", a, b, out, 2);
  if (e == Error::Ok) e = expect_dtype(ctx, "addmm", "self", bias, ScalarType::Float32);
  if (e != Error::Ok) return e;
  const int64_t sizes[2] = {a.sizes[0], b.sizes[1]};
  const Tensor* both[2] = {&bias, &out};
  int64_t bsizes[kMaxDim];
  int bdim = 0;
  Tensor shaped = out;
  shaped.dim = 2;
  shaped.sizes[0] = sizes[0];
  shaped.sizes[1] = sizes[1];
  both[1] = &shaped;
  e = broadcast_shapes(ctx, "addmm", both, 2, bsizes, &bdim);
  if (e != Error::Ok) return e;
  if (bdim != 2 || bsizes[0] != sizes[0] || bsizes[1] != sizes[1])
    return ctx.fail(Error::InvalidArgument, "addmm: self does not broadcast to the product's shape");
  e = resize_output(ctx, "addmm", out, sizes, 2);
  if (e != Error::Ok) return e;
  float* y = out.data_as<float>();
  matmul(ctx, product(a, b, y, 0));
  int64_t strides[kMaxDim];
  broadcast_strides(bias, sizes, 2, strides);
  const float* c = bias.data_as<const float>();
  for (int64_t i = 0; i < sizes[0]; ++i)
    for (int64_t j = 0; j < sizes[1]; ++j)
      y[i * sizes[1] + j] = alpha * y[i * sizes[1] + j] + beta * c[i * strides[0] + j * strides[1]];
  return Error::Ok;
}

}  // namespace detail

Error op_mm(KernelContext& ctx, Value** args) { return detail::mm_with(ctx, args, detail::matmul_portable); }
Error op_bmm(KernelContext& ctx, Value** args) { return detail::bmm_with(ctx, args, detail::matmul_portable); }
Error op_addmm(KernelContext& ctx, Value** args) { return detail::addmm_with(ctx, args, detail::matmul_portable); }

}  // namespace pocket
