// aten::mm(Tensor self, Tensor mat2) -> Tensor
// aten::bmm(Tensor self, Tensor mat2) -> Tensor
// aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
//
// One strided matrix product serves all three, so transposed operands need no copy.
#include "nn_util.h"

namespace pocket {

namespace {

// c (n, m) = a (n, k) · b (k, m), each addressed through its own strides.
struct MatrixView {
  const float* data;
  int64_t rows, cols, row_stride, col_stride;
  float at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

void matmul(const MatrixView& a, const MatrixView& b, float* c) {
  const int64_t n = a.rows, k = a.cols, m = b.cols;
  for (int64_t i = 0; i < n; ++i) {
    float* row = c + i * m;
    for (int64_t j = 0; j < m; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float x = a.at(i, p);
      const float* brow = b.data + p * b.row_stride;
      if (b.col_stride == 1) {
        for (int64_t j = 0; j < m; ++j) row[j] += x * brow[j];
      } else {
        for (int64_t j = 0; j < m; ++j) row[j] += x * brow[j * b.col_stride];
      }
    }
  }
}

MatrixView view(const Tensor& t, int batch_dims, int64_t batch) {
  const int r = batch_dims, c = batch_dims + 1;
  const int64_t offset = batch_dims ? batch * t.strides[0] : 0;
  return {t.data_as<const float>() + offset, t.sizes[r], t.sizes[c], t.strides[r], t.strides[c]};
}

Error check(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b, const Tensor& out, int dims) {
  for (const Tensor* t : {&a, &b, &out}) {
    Error e = detail::expect_dtype(ctx, op, "tensor", *t, ScalarType::Float32);
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

Error op_mm(KernelContext& ctx, Value** args) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  Error e = check(ctx, "mm", a, b, out, 2);
  if (e != Error::Ok) return e;
  const int64_t sizes[2] = {a.sizes[0], b.sizes[1]};
  e = detail::resize_output(ctx, "mm", out, sizes, 2);
  if (e != Error::Ok) return e;
  matmul(view(a, 0, 0), view(b, 0, 0), out.data_as<float>());
  return Error::Ok;
}

Error op_bmm(KernelContext& ctx, Value** args) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  Error e = check(ctx, "bmm", a, b, out, 3);
  if (e != Error::Ok) return e;
  const int64_t sizes[3] = {a.sizes[0], a.sizes[1], b.sizes[2]};
  e = detail::resize_output(ctx, "bmm", out, sizes, 3);
  if (e != Error::Ok) return e;
  for (int64_t i = 0; i < a.sizes[0]; ++i)  // batch
    matmul(view(a, 1, i), view(b, 1, i), out.data_as<float>() + i * sizes[1] * sizes[2]);
  return Error::Ok;
}

Error op_addmm(KernelContext& ctx, Value** args) {
  const Tensor& bias = args[0]->tensor;
  const Tensor& a = args[1]->tensor;
  const Tensor& b = args[2]->tensor;
  const float beta = static_cast<float>(args[3]->to_double());
  const float alpha = static_cast<float>(args[4]->to_double());
  Tensor& out = args[5]->tensor;
  Error e = check(ctx, "addmm", a, b, out, 2);
  if (e == Error::Ok) e = detail::expect_dtype(ctx, "addmm", "self", bias, ScalarType::Float32);
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
  e = detail::broadcast_shapes(ctx, "addmm", both, 2, bsizes, &bdim);
  if (e != Error::Ok) return e;
  if (bdim != 2 || bsizes[0] != sizes[0] || bsizes[1] != sizes[1])
    return ctx.fail(Error::InvalidArgument, "addmm: self does not broadcast to the product's shape");
  e = detail::resize_output(ctx, "addmm", out, sizes, 2);
  if (e != Error::Ok) return e;
  float* y = out.data_as<float>();
  matmul(view(a, 0, 0), view(b, 0, 0), y);
  int64_t strides[kMaxDim];
  detail::broadcast_strides(bias, sizes, 2, strides);
  const float* c = bias.data_as<const float>();
  for (int64_t i = 0; i < sizes[0]; ++i)
    for (int64_t j = 0; j < sizes[1]; ++j)
      y[i * sizes[1] + j] = alpha * y[i * sizes[1] + j] + beta * c[i * strides[0] + j * strides[1]];
  return Error::Ok;
}

}  // namespace pocket
