// pocket::embedding_q(Tensor qweight, Tensor scales, Tensor? mins, Tensor indices, int bits, int group_size) -> Tensor
//
// Gathers rows of a quantized table (V, D) (schema/QUANTIZATION.md) by indices (any shape,
// int64 or int32) and dequantizes them: -> (*indices.shape, D) float32, bit-exact with
// exporter/quant/ops.py (scales and mins float32 or float16, read in place).
// pocket::embedding_q_packed(same arguments) -> Tensor: a 4-bit table in linear_q_packed's
//   layout (QuantWeight::packed), for a table that is also a packed linear_q's weight (tied
//   embeddings: the file stores it once).
#include "quant_util.h"

namespace pocket {

namespace {

constexpr const char* kOp = "embedding_q";

// y (count, D) = dequantized rows of w picked by idx; fails on the first index outside [0, V).
template <typename I>
Error gather(KernelContext& ctx, const char* op, const detail::QuantWeight& w, const Tensor& indices,
             int8_t* scratch, float* y) {
  const I* idx = indices.data_as<const I>();
  int64_t strides[1][kMaxDim];
  for (int d = 0; d < indices.dim; ++d) strides[0][d] = indices.strides[d];
  int64_t n = 0, bad = 0;
  bool ok = true;
  detail::for_each_offset<1>(indices.sizes, indices.dim, strides, [&](const int64_t* o) {
    int64_t r = static_cast<int64_t>(idx[o[0]]);
    if (!ok || r < 0 || r >= w.rows) {
      if (ok) bad = r;
      ok = false;
      return;
    }
    detail::dequantize_row(w, r, scratch, y + n * w.cols);
    ++n;
  });
  if (!ok)
    return ctx.fail(Error::OutOfRange, "%s: index %lld is out of range for a table of %lld rows", op,
                    static_cast<long long>(bad), static_cast<long long>(w.rows));
  return Error::Ok;
}

Error embedding_q(KernelContext& ctx, Value** args, bool packed) {
  const char* op = packed ? "embedding_q_packed" : kOp;
  const Tensor& qweight = args[0]->tensor;  // (V, D / 2) 4-bit or (V, D) 8-bit
  const Tensor& scales = args[1]->tensor;   // (V, D / group_size)
  const Tensor* mins = args[2]->is_none() ? nullptr : &args[2]->tensor;
  const Tensor& indices = args[3]->tensor;  // (...)
  Tensor& out = args[6]->tensor;            // (..., D)
  if (indices.dtype != ScalarType::Int64 && indices.dtype != ScalarType::Int32)
    return ctx.fail(Error::InvalidArgument, "%s: indices have dtype %s, expected int64 or int32", op,
                    scalar_type_name(indices.dtype));
  if (indices.dim + 1 > kMaxDim)
    return ctx.fail(Error::InvalidArgument, "%s: indices have %d dims, at most %d supported", op,
                    indices.dim, kMaxDim - 1);
  Error e = detail::expect_dtype(ctx, op, "output", out, ScalarType::Float32);
  if (e != Error::Ok) return e;
  detail::QuantWeight w;
  e = packed ? detail::read_packed_quant_weight(ctx, op, qweight, scales, mins, args[4]->i, args[5]->i, -1, &w)
             : detail::read_quant_weight(ctx, op, qweight, scales, mins, args[4]->i, args[5]->i, -1, &w);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  for (int d = 0; d < indices.dim; ++d) sizes[d] = indices.sizes[d];
  sizes[indices.dim] = w.cols;
  e = detail::resize_output(ctx, op, out, sizes, indices.dim + 1);
  if (e != Error::Ok) return e;
  int8_t* scratch = nullptr;  // (D) one unpacked row
  e = detail::temp_array(ctx, op, "an unpacked row", w.cols, &scratch);
  if (e != Error::Ok) return e;
  if (indices.dtype == ScalarType::Int64) return gather<int64_t>(ctx, op, w, indices, scratch, out.data_as<float>());
  return gather<int32_t>(ctx, op, w, indices, scratch, out.data_as<float>());
}

}  // namespace

Error op_embedding_q(KernelContext& ctx, Value** args) { return embedding_q(ctx, args, false); }
Error op_embedding_q_packed(KernelContext& ctx, Value** args) { return embedding_q(ctx, args, true); }

}  // namespace pocket
