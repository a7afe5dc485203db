#include "quant_util.h"

// The reference rounds every float32 operation separately (torch runs mul and add as two
// kernels); GCC's default -ffp-contract=fast would fuse q * scale + min (and x * inv + magic
// in the rounding trick) into one FMA on arm64 and change the last bit. These functions turn
// contraction off.
#if defined(__clang__)
#define POCKET_NO_FP_CONTRACT
#define POCKET_NO_FP_CONTRACT_BODY _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define POCKET_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#define POCKET_NO_FP_CONTRACT_BODY
#else
#define POCKET_NO_FP_CONTRACT
#define POCKET_NO_FP_CONTRACT_BODY
#endif

namespace pocket {
namespace detail {

namespace {

Error expect_shape2(KernelContext& ctx, const char* op, const char* arg, const Tensor& t,
                    int64_t rows, int64_t cols, const char* why) {
  if (t.dim == 2 && t.sizes[0] == rows && t.sizes[1] == cols) return Error::Ok;
  char buf[128];
  return ctx.fail(Error::InvalidArgument, "%s: %s has shape %s, expected [%lld, %lld] (%s)", op,
                  arg, shape_string(t.sizes, t.dim, buf, sizeof buf), static_cast<long long>(rows),
                  static_cast<long long>(cols), why);
}

Error check_format(KernelContext& ctx, const char* op, const Tensor& qweight, const Tensor* mins,
                   int64_t bits, int64_t group_size) {
  if (bits != 4 && bits != 8)
    return ctx.fail(Error::InvalidArgument, "%s: bits is %lld, expected 4 or 8", op,
                    static_cast<long long>(bits));
  if (group_size <= 0 || group_size % 2 != 0)
    return ctx.fail(Error::InvalidArgument, "%s: group_size is %lld, expected a positive even number",
                    op, static_cast<long long>(group_size));
  char buf[128];
  if (qweight.dim != 2)
    return ctx.fail(Error::InvalidArgument, "%s: qweight has shape %s, expected 2 dims", op,
                    shape_string(qweight.sizes, qweight.dim, buf, sizeof buf));
  ScalarType want = bits == 8 && mins == nullptr ? ScalarType::Int8 : ScalarType::UInt8;
  if (qweight.dtype != want)
    return ctx.fail(Error::InvalidArgument, "%s: %lld-bit %s qweight has dtype %s, expected %s", op,
                    static_cast<long long>(bits), mins == nullptr ? "symmetric" : "asymmetric",
                    scalar_type_name(qweight.dtype), scalar_type_name(want));
  return Error::Ok;
}

// scales float32 or float16, mins (if any) the same dtype.
Error check_scale_dtypes(KernelContext& ctx, const char* op, const Tensor& scales, const Tensor* mins) {
  if (scales.dtype != ScalarType::Float32 && scales.dtype != ScalarType::Float16)
    return ctx.fail(Error::InvalidArgument, "%s: scales has dtype %s, expected float32 or float16", op,
                    scalar_type_name(scales.dtype));
  if (mins != nullptr && mins->dtype != scales.dtype)
    return ctx.fail(Error::InvalidArgument, "%s: scales and mins must have the same dtype (%s vs %s)", op,
                    scalar_type_name(scales.dtype), scalar_type_name(mins->dtype));
  return Error::Ok;
}

// Points w->scales and w->mins at the contiguous data of scales and mins (dtypes checked).
Error scale_data(KernelContext& ctx, const char* op, const Tensor& scales, const Tensor* mins, QuantWeight* w) {
  w->half = scales.dtype == ScalarType::Float16;
  w->mins = nullptr;
  Error e = Error::Ok;
  if (w->half) {
    const uint16_t *s = nullptr, *m = nullptr;
    e = contiguous_data(ctx, op, "scales", scales, &s);
    if (e == Error::Ok && mins != nullptr) e = contiguous_data(ctx, op, "mins", *mins, &m);
    w->scales = s;
    w->mins = m;
  } else {
    const float *s = nullptr, *m = nullptr;
    e = contiguous_data(ctx, op, "scales", scales, &s);
    if (e == Error::Ok && mins != nullptr) e = contiguous_data(ctx, op, "mins", *mins, &m);
    w->scales = s;
    w->mins = m;
  }
  return e;
}

}  // namespace

Error read_quant_weight(KernelContext& ctx, const char* op, const Tensor& qweight,
                        const Tensor& scales, const Tensor* mins, int64_t bits, int64_t group_size,
                        int64_t cols, QuantWeight* w) {
  Error e = check_format(ctx, op, qweight, mins, bits, group_size);
  if (e != Error::Ok) return e;
  int64_t per_byte = bits == 4 ? 2 : 1;
  if (cols < 0) cols = qweight.sizes[1] * per_byte;
  if (cols % group_size != 0)
    return ctx.fail(Error::InvalidArgument, "%s: %lld columns are not a multiple of group_size %lld",
                    op, static_cast<long long>(cols), static_cast<long long>(group_size));
  int64_t rows = qweight.sizes[0], groups = cols / group_size;
  e = expect_shape2(ctx, op, "qweight", qweight, rows, cols / per_byte,
                    bits == 4 ? "two 4-bit columns per byte" : "one 8-bit column per byte");
  if (e == Error::Ok) e = check_scale_dtypes(ctx, op, scales, mins);
  if (e == Error::Ok) e = expect_shape2(ctx, op, "scales", scales, rows, groups, "rows, columns / group_size");
  if (e == Error::Ok && mins != nullptr)
    e = expect_shape2(ctx, op, "mins", *mins, rows, groups, "rows, columns / group_size");
  if (e == Error::Ok) e = contiguous_data(ctx, op, "qweight", qweight, &w->data);
  if (e == Error::Ok) e = scale_data(ctx, op, scales, mins, w);
  if (e != Error::Ok) return e;
  w->rows = rows;
  w->cols = cols;
  w->group_size = group_size;
  w->groups = groups;
  w->row_bytes = cols / per_byte;
  w->bits = static_cast<int>(bits);
  return Error::Ok;
}

Error read_packed_quant_weight(KernelContext& ctx, const char* op, const Tensor& qweight,
                               const Tensor& scales, const Tensor* mins, int64_t bits, int64_t group_size,
                               int64_t cols, QuantWeight* w) {
  if (bits != 4 && bits != 8)
    return ctx.fail(Error::InvalidArgument, "%s: bits is %lld, expected 4 or 8", op, static_cast<long long>(bits));
  const ScalarType want = bits == 8 && mins == nullptr ? ScalarType::Int8 : ScalarType::UInt8;
  if (qweight.dtype != want)
    return ctx.fail(Error::InvalidArgument, "%s: %lld-bit %s qweight has dtype %s, expected %s", op,
                    static_cast<long long>(bits), mins == nullptr ? "symmetric" : "asymmetric",
                    scalar_type_name(qweight.dtype), scalar_type_name(want));
  if (group_size <= 0 || group_size % kPackedGroup != 0)
    return ctx.fail(Error::InvalidArgument, "%s: group_size is %lld, expected a positive multiple of %lld", op,
                    static_cast<long long>(group_size), static_cast<long long>(kPackedGroup));
  const int64_t step = packed_step(static_cast<int>(bits));
  char buf[128];
  if (qweight.dim != 3 || qweight.sizes[2] != 4 * kPackedLanes)
    return ctx.fail(Error::InvalidArgument, "%s: qweight has shape %s, expected [rows / %lld, columns / %lld, %lld] (packed)",
                    op, shape_string(qweight.sizes, qweight.dim, buf, sizeof buf), static_cast<long long>(kPackedLanes),
                    static_cast<long long>(step), static_cast<long long>(4 * kPackedLanes));
  if (cols < 0) cols = qweight.sizes[1] * step;
  if (cols % group_size != 0)
    return ctx.fail(Error::InvalidArgument, "%s: %lld columns are not a multiple of group_size %lld", op,
                    static_cast<long long>(cols), static_cast<long long>(group_size));
  const int64_t steps = cols / step, groups = cols / group_size;
  if (qweight.sizes[1] != steps)
    return ctx.fail(Error::InvalidArgument,
                    "%s: qweight has shape %s, expected [rows / %lld, %lld, %lld] (packed: %lld columns)", op,
                    shape_string(qweight.sizes, qweight.dim, buf, sizeof buf), static_cast<long long>(kPackedLanes),
                    static_cast<long long>(steps), static_cast<long long>(4 * kPackedLanes),
                    static_cast<long long>(cols));
  const int64_t blocks = qweight.sizes[0];
  Error e = check_scale_dtypes(ctx, op, scales, mins);
  if (e != Error::Ok) return e;
  for (const Tensor* t : {&scales, mins}) {
    if (t == nullptr) continue;
    const char* name = t == &scales ? "scales" : "mins";
    if (t->dim != 3 || t->sizes[0] != blocks || t->sizes[1] != groups || t->sizes[2] != kPackedLanes)
      return ctx.fail(Error::InvalidArgument, "%s: %s has shape %s, expected [%lld, %lld, %lld] (packed)", op, name,
                      shape_string(t->sizes, t->dim, buf, sizeof buf), static_cast<long long>(blocks),
                      static_cast<long long>(groups), static_cast<long long>(kPackedLanes));
  }
  e = contiguous_data(ctx, op, "qweight", qweight, &w->data);
  if (e == Error::Ok) e = scale_data(ctx, op, scales, mins, w);
  if (e != Error::Ok) return e;
  w->rows = blocks * kPackedLanes;
  w->cols = cols;
  w->group_size = group_size;
  w->groups = groups;
  w->row_bytes = cols * bits / 8;
  w->bits = static_cast<int>(bits);
  w->packed = true;
  return Error::Ok;
}

const float* row_scales(const QuantWeight& w, const void* values, int64_t r, float* scratch) {
  if (!w.packed && !w.half) return static_cast<const float*>(values) + r * w.groups;
  const int64_t at = w.packed ? (r / kPackedLanes) * w.groups * kPackedLanes + r % kPackedLanes : r * w.groups;
  const int64_t stride = w.packed ? kPackedLanes : 1;
  for (int64_t j = 0; j < w.groups; ++j) scratch[j] = w.value(values, at + j * stride);
  return scratch;
}

void unpack_row_4bit(const QuantWeight& w, int64_t r, int8_t* __restrict out) {
  const int offset = w.symmetric() ? 8 : 0;
  if (w.packed) {
    const int64_t steps = w.cols / 8, lane = 4 * (r % kPackedLanes);
    const uint8_t* __restrict p = w.data + (r / kPackedLanes) * steps * 4 * kPackedLanes + lane;
    for (int64_t t = 0; t < steps; ++t, p += 4 * kPackedLanes)
      for (int i = 0; i < 4; ++i) {
        out[8 * t + i] = static_cast<int8_t>((p[i] & 0x0F) - offset);
        out[8 * t + 4 + i] = static_cast<int8_t>((p[i] >> 4) - offset);
      }
    return;
  }
  const uint8_t* __restrict p = w.row(r);
  const int64_t n = w.row_bytes;  // a local: out (a char type) could alias w's fields
  for (int64_t j = 0; j < n; ++j) {
    out[2 * j] = static_cast<int8_t>((p[j] & 0x0F) - offset);
    out[2 * j + 1] = static_cast<int8_t>((p[j] >> 4) - offset);
  }
}

const uint8_t* row_bytes_8bit(const QuantWeight& w, int64_t r, uint8_t* __restrict scratch) {
  if (!w.packed) return w.row(r);
  const int64_t steps = w.cols / 4;
  const uint8_t* __restrict p = w.data + (r / kPackedLanes) * steps * 4 * kPackedLanes + 4 * (r % kPackedLanes);
  for (int64_t t = 0; t < steps; ++t, p += 4 * kPackedLanes)
    for (int i = 0; i < 4; ++i) scratch[4 * t + i] = p[i];
  return scratch;
}

namespace {

// Group j's scale and min: w.value(scales / mins, at + j * stride).
template <typename W>
POCKET_NO_FP_CONTRACT void scale_row(const W* __restrict q, const QuantWeight& w, int64_t at, int64_t stride,
                                     float* __restrict out) {
  POCKET_NO_FP_CONTRACT_BODY
  const int64_t groups = w.groups, g = w.group_size;
  const bool asym = w.mins != nullptr;
  for (int64_t j = 0; j < groups; ++j) {
    const float s = w.value(w.scales, at + j * stride);
    if (!asym) {
      for (int64_t c = j * g; c < (j + 1) * g; ++c) out[c] = static_cast<float>(q[c]) * s;
      continue;
    }
    const float m = w.value(w.mins, at + j * stride);
    for (int64_t c = j * g; c < (j + 1) * g; ++c) out[c] = static_cast<float>(q[c]) * s + m;  // not fused
  }
}

}  // namespace

void dequantize_row(const QuantWeight& w, int64_t r, int8_t* scratch, float* out) {
  // A packed w keeps row r's values of a group at lane r % 16 of its block's group.
  const int64_t at = w.packed ? (r / kPackedLanes) * w.groups * kPackedLanes + r % kPackedLanes : r * w.groups;
  const int64_t stride = w.packed ? kPackedLanes : 1;
  if (w.bits == 4) {
    unpack_row_4bit(w, r, scratch);
    scale_row<int8_t>(scratch, w, at, stride, out);
    return;
  }
  const uint8_t* bytes = row_bytes_8bit(w, r, reinterpret_cast<uint8_t*>(scratch));
  if (w.symmetric())
    scale_row(reinterpret_cast<const int8_t*>(bytes), w, at, stride, out);
  else
    scale_row(bytes, w, at, stride, out);
}

POCKET_NO_FP_CONTRACT void quantize_activations(const float* __restrict x, int64_t rows, int64_t cols,
                                                int64_t block, int16_t* __restrict xq, float* scales) {
  POCKET_NO_FP_CONTRACT_BODY
  const int64_t blocks = rows * (cols / block);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * block;
    int16_t* qb = xq + b * block;
    float amax = 0;
    for (int64_t i = 0; i < block; ++i) {
      float a = xb[i] < 0 ? -xb[i] : xb[i];
      amax = a > amax ? a : amax;
    }
    const float scale = amax / 127.0f;
    const float inv = scale > 0 ? 1.0f / scale : 0.0f;
    scales[b] = scale;
    for (int64_t i = 0; i < block; ++i)
      qb[i] = static_cast<int16_t>(round_half_even_small(clamp_float(xb[i] * inv, -127.0f, 127.0f)));
  }
}

}  // namespace detail
}  // namespace pocket
