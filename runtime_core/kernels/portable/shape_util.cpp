#include "shape_util.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace pocket {
namespace detail {

// ---- views and copies

Tensor make_view(const Tensor& t, int64_t offset, const int64_t* sizes, const int64_t* strides,
                 int dim) {
  Tensor v;
  v.dtype = t.dtype;
  v.dim = dim;
  for (int d = 0; d < dim; ++d) v.sizes[d] = sizes[d];
  if (strides == nullptr) {
    v.set_contiguous_strides();
  } else {
    for (int d = 0; d < dim; ++d) v.strides[d] = strides[d];
  }
  v.data = element_ptr(t, offset);
  return v;
}

// Drops size-1 dims and merges each dim into its outer neighbour when both tensors step
// over it contiguously, so most copies become a few long rows. Returns the new dim count.
static int coalesce(const Tensor& a, const Tensor& b, int64_t* sizes, int64_t (*strides)[kMaxDim]) {
  int n = 0;
  for (int d = 0; d < a.dim; ++d) {
    int64_t s = a.sizes[d];
    if (s == 1) continue;
    if (n > 0 && strides[0][n - 1] == a.strides[d] * s && strides[1][n - 1] == b.strides[d] * s) {
      sizes[n - 1] *= s;
      strides[0][n - 1] = a.strides[d];
      strides[1][n - 1] = b.strides[d];
      continue;
    }
    sizes[n] = s;
    strides[0][n] = a.strides[d];
    strides[1][n] = b.strides[d];
    ++n;
  }
  return n;
}

template <size_t kSize>
static void copy_fixed(char* dst, const char* src, const int64_t* sizes, int dim,
                       const int64_t (*strides)[kMaxDim]) {
  for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    std::memmove(dst + o[0] * static_cast<int64_t>(kSize), src + o[1] * static_cast<int64_t>(kSize),
                kSize);
  });
}

void copy_elements(const Tensor& dst, const Tensor& src) {
  if (src.numel() == 0) return;
  int64_t es = static_cast<int64_t>(element_size(src.dtype));
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  char* d = static_cast<char*>(dst.data);
  const char* s = static_cast<const char*>(src.data);
  if (dim == 0) {
    if (d != s) copy_element(d, s, static_cast<size_t>(es));
    return;
  }
  if (strides[0][dim - 1] == 1 && strides[1][dim - 1] == 1) {
    if (dim == 1 && d == s) return;  // copying a contiguous tensor onto itself
    size_t row = static_cast<size_t>(sizes[dim - 1] * es);
    for_each_offset<2>(sizes, dim - 1, strides,
                       [&](const int64_t* o) { std::memmove(d + o[0] * es, s + o[1] * es, row); });
    return;
  }
  switch (es) {
    case 1: copy_fixed<1>(d, s, sizes, dim, strides); break;
    case 2: copy_fixed<2>(d, s, sizes, dim, strides); break;
    case 4: copy_fixed<4>(d, s, sizes, dim, strides); break;
    default: copy_fixed<8>(d, s, sizes, dim, strides); break;
  }
}

void convert_elements(const Tensor& dst, const Tensor& src) {
  if (dst.dtype == src.dtype) return copy_elements(dst, src);
  if (src.numel() == 0) return;
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  ScalarType dt = dst.dtype, st = src.dtype;
  void* d = dst.data;
  const void* s = src.data;
  if (st == ScalarType::Float32 && (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)) {
    uint16_t (*round)(float) = dt == ScalarType::Float16 ? float_to_half : float_to_bfloat16;
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      static_cast<uint16_t*>(d)[o[0]] = round(static_cast<const float*>(s)[o[1]]);
    });
    return;
  }
  if (dt == ScalarType::Float32 && (st == ScalarType::Float16 || st == ScalarType::BFloat16)) {
    float (*widen)(uint16_t) = st == ScalarType::Float16 ? half_to_float : bfloat16_to_float;
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      static_cast<float*>(d)[o[0]] = widen(static_cast<const uint16_t*>(s)[o[1]]);
    });
    return;
  }
  if (is_integral(st)) {
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      store_int64(d, dt, o[0], load_int64(s, st, o[1]));
    });
    return;
  }
  for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    store_double(d, dt, o[0], load_double(s, st, o[1]));
  });
}

template <typename T>
static void accumulate_typed(const Tensor& dst, const Tensor& src, const int64_t* sizes, int dim,
                             const int64_t (*strides)[kMaxDim]) {
  T* d = dst.data_as<T>();
  const T* s = src.data_as<T>();
  for_each_offset<2>(sizes, dim, strides,
                     [&](const int64_t* o) { d[o[0]] = static_cast<T>(d[o[0]] + s[o[1]]); });
}

void accumulate_elements(const Tensor& dst, const Tensor& src) {
  if (src.numel() == 0) return;
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  switch (dst.dtype) {
    case ScalarType::Float32: return accumulate_typed<float>(dst, src, sizes, dim, strides);
    case ScalarType::Float64: return accumulate_typed<double>(dst, src, sizes, dim, strides);
    case ScalarType::Int64: return accumulate_typed<int64_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int32: return accumulate_typed<int32_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int16: return accumulate_typed<int16_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int8: return accumulate_typed<int8_t>(dst, src, sizes, dim, strides);
    case ScalarType::UInt8: return accumulate_typed<uint8_t>(dst, src, sizes, dim, strides);
    case ScalarType::Bool: return accumulate_typed<bool>(dst, src, sizes, dim, strides);
    case ScalarType::Float16:
    case ScalarType::BFloat16: {
      ScalarType t = dst.dtype;
      for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
        double sum = load_double(dst.data, t, o[0]) + load_double(src.data, t, o[1]);
        store_double(dst.data, t, o[0], static_cast<float>(sum));
      });
      return;
    }
  }
}

Error copy_to_output(KernelContext& ctx, const char* op, const Tensor& view, Tensor& out,
                     const int64_t* sizes, int dim) {
  Error e = expect_same_dtype(ctx, op, view, out);
  if (e != Error::Ok) return e;
  e = resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  if (out.numel() != view.numel())
    return ctx.fail(Error::Internal, "%s: %lld elements copied into %lld", op,
                    static_cast<long long>(view.numel()), static_cast<long long>(out.numel()));
  copy_elements(make_view(out, 0, view.sizes, nullptr, view.dim), view);
  return Error::Ok;
}

Error copy_into_view(KernelContext& ctx, const char* op, const Tensor& view, const Tensor& src) {
  bool same = src.dim == view.dim;
  for (int d = 0; same && d < src.dim; ++d) same = src.sizes[d] == view.sizes[d];
  if (!same) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument, "%s: src has shape %s, expected %s", op,
                    shape_string(src.sizes, src.dim, a, sizeof a),
                    shape_string(view.sizes, view.dim, b, sizeof b));
  }
  copy_elements(view, src);
  return Error::Ok;
}

Error broadcast_view(KernelContext& ctx, const char* op, const char* what, const Tensor& t,
                     const int64_t* sizes, int dim, Tensor* view) {
  int lead = 0;  // leading size-1 dims of t beyond `dim`
  while (t.dim - lead > dim && t.sizes[lead] == 1) ++lead;
  bool ok = t.dim - lead <= dim;
  for (int d = 0; ok && d < t.dim - lead; ++d) {
    int64_t s = t.sizes[lead + d];
    ok = s == 1 || s == sizes[dim - (t.dim - lead) + d];
  }
  if (!ok) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument, "%s: %s of shape %s cannot be broadcast to %s", op,
                    what, shape_string(t.sizes, t.dim, a, sizeof a),
                    shape_string(sizes, dim, b, sizeof b));
  }
  *view = make_view(t, 0, sizes, nullptr, dim);
  for (int d = 0; d < dim; ++d) {
    int td = d - (dim - (t.dim - lead));
    view->strides[d] = (td < 0 || t.sizes[lead + td] == 1) ? 0 : t.strides[lead + td];
  }
  return Error::Ok;
}

// ---- argument checks

Error expect_same_dtype(KernelContext& ctx, const char* op, const Tensor& in, const Tensor& out) {
  if (in.dtype == out.dtype) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: input dtype %s differs from output dtype %s", op,
                  scalar_type_name(in.dtype), scalar_type_name(out.dtype));
}

Error check_dtype_arg(KernelContext& ctx, const char* op, const Value& dtype, const Tensor* like,
                      const Tensor& out) {
  if (dtype.is_none() && like == nullptr) return Error::Ok;
  if (!dtype.is_none() && !is_valid_scalar_type(static_cast<int>(dtype.i)))
    return ctx.fail(Error::InvalidArgument, "%s: invalid dtype %lld", op,
                    static_cast<long long>(dtype.i));
  ScalarType want = dtype.is_none() ? like->dtype : static_cast<ScalarType>(dtype.i);
  if (want == out.dtype) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: dtype %s does not match the output dtype %s", op,
                  scalar_type_name(want), scalar_type_name(out.dtype));
}

Error expect_not_scalar(KernelContext& ctx, const char* op, const Tensor& t) {
  if (t.dim > 0) return Error::Ok;
  return ctx.fail(Error::InvalidArgument,
                  "%s: expected a tensor with at least 1 dim, got a 0-d tensor", op);
}

Error read_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t* sizes,
                 int* dim) {
  if (list.size > static_cast<size_t>(kMaxDim))
    return ctx.fail(Error::Unsupported, "%s: %zu dims given, at most %d are supported", op,
                    list.size, kMaxDim);
  for (size_t i = 0; i < list.size; ++i) {
    sizes[i] = list[i];
    if (sizes[i] < 0)
      return ctx.fail(Error::InvalidArgument, "%s: negative size %lld at dim %zu", op,
                      static_cast<long long>(sizes[i]), i);
  }
  *dim = static_cast<int>(list.size);
  return Error::Ok;
}

Error infer_view_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t numel,
                       int64_t* sizes, int* dim) {
  if (list.size > static_cast<size_t>(kMaxDim))
    return ctx.fail(Error::Unsupported, "%s: %zu dims given, at most %d are supported", op,
                    list.size, kMaxDim);
  int n = static_cast<int>(list.size);
  int infer = -1;
  int64_t known = 1;
  bool overflow = false;
  for (int i = 0; i < n; ++i) {
    sizes[i] = list[i];
    if (sizes[i] == -1 && infer < 0) {
      infer = i;
    } else if (sizes[i] == -1) {
      return ctx.fail(Error::InvalidArgument, "%s: only one dimension can be inferred (-1)", op);
    } else if (sizes[i] < 0) {
      return ctx.fail(Error::InvalidArgument, "%s: invalid size %lld at dim %d", op,
                      static_cast<long long>(sizes[i]), i);
    } else {
      overflow |= __builtin_mul_overflow(known, sizes[i], &known);
    }
  }
  bool ok = !overflow && (infer >= 0 ? known != 0 && numel % known == 0 : known == numel);
  if (!ok) {
    char buf[128];
    return ctx.fail(Error::InvalidArgument, "%s: shape %s is invalid for %lld elements", op,
                    shape_string(sizes, n, buf, sizeof buf), static_cast<long long>(numel));
  }
  if (infer >= 0) sizes[infer] = numel / known;
  *dim = n;
  return Error::Ok;
}

Error view_to_output(KernelContext& ctx, const char* op, const Tensor& self, const IntList& size,
                     Tensor& out) {
  int64_t sizes[kMaxDim];
  int dim = 0;
  Error e = infer_view_sizes(ctx, op, size, self.numel(), sizes, &dim);
  if (e != Error::Ok) return e;
  return copy_to_output(ctx, op, self, out, sizes, dim);
}

Error slice_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                 const Value& start, const Value& end, int64_t step, Tensor* view) {
  Error e = expect_not_scalar(ctx, op, self);
  int d = 0;
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, self.dim, &d);
  if (e != Error::Ok) return e;
  if (step <= 0)
    return ctx.fail(Error::InvalidArgument, "%s: step must be positive, got %lld", op,
                    static_cast<long long>(step));
  int64_t size = self.sizes[d];
  int64_t lo = start.is_none() ? 0 : start.i;
  int64_t hi = end.is_none() ? size : end.i;
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = lo < 0 ? 0 : (lo > size ? size : lo);
  hi = hi < lo ? lo : (hi > size ? size : hi);
  int64_t len = hi == lo ? 0 : (hi - lo - 1) / step + 1;
  *view = self;
  view->sizes[d] = len;
  if (len > 1) view->strides[d] = self.strides[d] * step;  // step < size here: no overflow
  if (len > 0) view->data = element_ptr(self, lo * self.strides[d]);
  return Error::Ok;
}

Error select_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                  int64_t index, Tensor* view) {
  Error e = expect_not_scalar(ctx, op, self);
  int d = 0;
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, self.dim, &d);
  int64_t i = 0;
  if (e == Error::Ok) e = wrap_index(ctx, op, index, d, self.sizes[d], &i);
  if (e != Error::Ok) return e;
  *view = self;
  view->dim = self.dim - 1;
  for (int k = d; k < view->dim; ++k) {
    view->sizes[k] = self.sizes[k + 1];
    view->strides[k] = self.strides[k + 1];
  }
  view->data = element_ptr(self, i * self.strides[d]);
  return Error::Ok;
}

// ---- dtype conversion

bool is_integral(ScalarType t) { return !is_floating(t); }

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t man = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    float f = static_cast<float>(man) * 5.9604644775390625e-8f;  // man * 2^-24, exact
    return (h & 0x8000) ? -f : f;
  }
  if (exp == 31) {
    bits = sign | 0x7F800000 | (man << 13);  // inf or NaN (payload kept)
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Rounds q (a result of shifting `rem`'s bits out) to nearest even; `half` is the tie value.
static uint32_t round_nearest_even(uint32_t q, uint32_t rem, uint32_t half) {
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00);  // NaN, inf
  if (abs >= 0x477FF000) return sign | 0x7C00;  // >= 65520 rounds to inf
  if (abs < 0x33000000) return sign;            // < 2^-25 rounds to zero
  uint32_t exp = abs >> 23;
  uint32_t man = abs & 0x7FFFFF;
  if (exp < 113) {  // below 2^-14: a half subnormal, in units of 2^-24
    uint32_t m = man | 0x800000;
    uint32_t shift = 126 - exp;  // 14..24
    uint32_t q = round_nearest_even(m >> shift, m & ((1u << shift) - 1), 1u << (shift - 1));
    return static_cast<uint16_t>(sign | q);  // q == 0x400 is the smallest normal: still right
  }
  uint32_t q = ((exp - 112) << 10) | (man >> 13);
  q = round_nearest_even(q, man & 0x1FFF, 0x1000);  // a carry into the exponent is right too
  return static_cast<uint16_t>(sign | q);
}

uint16_t float_to_bfloat16(float f) {
  if (std::isnan(f)) return 0x7FC0;
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

double load_double(const void* p, ScalarType t, int64_t i) {
  switch (t) {
    case ScalarType::Float16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case ScalarType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    default: return load_as<double>(p, t, i);
  }
}

int64_t load_int64(const void* p, ScalarType t, int64_t i) {
  switch (t) {
    case ScalarType::Int64: return static_cast<const int64_t*>(p)[i];
    case ScalarType::Int32: return static_cast<const int32_t*>(p)[i];
    case ScalarType::Int16: return static_cast<const int16_t*>(p)[i];
    case ScalarType::Int8: return static_cast<const int8_t*>(p)[i];
    case ScalarType::UInt8: return static_cast<const uint8_t*>(p)[i];
    case ScalarType::Bool: return static_cast<const bool*>(p)[i] ? 1 : 0;
    default: return static_cast<int64_t>(load_double(p, t, i));
  }
}

void store_int64(void* p, ScalarType t, int64_t i, int64_t v) {
  switch (t) {
    case ScalarType::Float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case ScalarType::Float64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case ScalarType::Float16:
      static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v));
      break;
    case ScalarType::BFloat16:
      static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v));
      break;
    case ScalarType::Int64: static_cast<int64_t*>(p)[i] = v; break;
    // Narrowing wraps modulo 2^n (well defined through the unsigned types).
    case ScalarType::Int32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(static_cast<uint32_t>(v));
      break;
    case ScalarType::Int16:
      static_cast<int16_t*>(p)[i] = static_cast<int16_t>(static_cast<uint16_t>(v));
      break;
    case ScalarType::Int8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<uint8_t>(v));
      break;
    case ScalarType::UInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case ScalarType::Bool: static_cast<bool*>(p)[i] = v != 0; break;
  }
}

// Truncates toward zero into int64, saturating; NaN becomes 0 (never undefined behaviour).
static int64_t saturate_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

void store_double(void* p, ScalarType t, int64_t i, double v) {
  switch (t) {
    case ScalarType::Float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case ScalarType::Float64: static_cast<double*>(p)[i] = v; break;
    case ScalarType::Float16:
      static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v));
      break;
    case ScalarType::BFloat16:
      static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v));
      break;
    case ScalarType::Bool: static_cast<bool*>(p)[i] = v != 0.0; break;
    default: store_int64(p, t, i, saturate_to_int64(v)); break;
  }
}

// The finite range of an integral or floating dtype, for scalar overflow checks.
static void dtype_range(ScalarType t, double* lo, double* hi) {
  switch (t) {
    case ScalarType::Int32: *lo = -2147483648.0; *hi = 2147483647.0; return;
    case ScalarType::Int16: *lo = -32768.0; *hi = 32767.0; return;
    case ScalarType::Int8: *lo = -128.0; *hi = 127.0; return;
    case ScalarType::UInt8: *lo = 0.0; *hi = 255.0; return;
    case ScalarType::Float32: *lo = -FLT_MAX; *hi = FLT_MAX; return;
    case ScalarType::Float16: *lo = -65504.0; *hi = 65504.0; return;
    case ScalarType::BFloat16: *lo = -3.3895313892515355e38; *hi = 3.3895313892515355e38; return;
    default: *lo = -DBL_MAX; *hi = DBL_MAX; return;  // int64 is checked separately
  }
}

Error scalar_to_element(KernelContext& ctx, const char* op, const Value& s, ScalarType t,
                        void* element) {
  double lo = 0, hi = 0;
  dtype_range(t, &lo, &hi);
  if (t == ScalarType::Bool) {
    store_int64(element, t, 0, s.tag == Value::Tag::Int ? s.i != 0 : s.to_double() != 0.0);
    return Error::Ok;
  }
  if (is_integral(t)) {
    double d = s.to_double();
    bool fits = s.tag == Value::Tag::Double
                    ? d >= -9223372036854775808.0 && d < 9223372036854775808.0  // NaN fails
                    : true;
    int64_t v = s.tag == Value::Tag::Double ? (fits ? static_cast<int64_t>(d) : 0)
                                            : (s.tag == Value::Tag::Int ? s.i : (s.b ? 1 : 0));
    if (!fits || (t != ScalarType::Int64 && (v < lo || v > hi)))
      return ctx.fail(Error::InvalidArgument,
                      "%s: value %g cannot be converted to %s without overflow", op, d,
                      scalar_type_name(t));
    store_int64(element, t, 0, v);
    return Error::Ok;
  }
  double d = s.to_double();
  if (std::isfinite(d) && (d < lo || d > hi))
    return ctx.fail(Error::InvalidArgument,
                    "%s: value %g cannot be converted to %s without overflow", op, d,
                    scalar_type_name(t));
  if (s.tag == Value::Tag::Int)
    store_int64(element, t, 0, s.i);  // one rounding from int64, as torch does
  else
    store_double(element, t, 0, d);
  return Error::Ok;
}

void fill_elements(const Tensor& out, const void* element) {
  int64_t n = out.numel();
  size_t es = element_size(out.dtype);
  char* p = static_cast<char*>(out.data);
  const char* e = static_cast<const char*>(element);
  bool zero = true;
  for (size_t b = 0; b < es; ++b) zero &= e[b] == 0;
  if (zero) {
    std::memset(p, 0, static_cast<size_t>(n) * es);
    return;
  }
  for (int64_t i = 0; i < n; ++i) copy_element(p + i * static_cast<int64_t>(es), e, es);
}

// ---- index tensors

Error expect_index_tensor(KernelContext& ctx, const char* op, const Tensor& index) {
  if (index.dtype == ScalarType::Int64 || index.dtype == ScalarType::Int32) return Error::Ok;
  if (index.dtype == ScalarType::Bool || index.dtype == ScalarType::UInt8)
    return ctx.fail(Error::Unsupported,
                    "%s: boolean mask indices are not supported (use int64 indices)", op);
  return ctx.fail(Error::InvalidArgument, "%s: index tensors must be int64 or int32, got %s", op,
                  scalar_type_name(index.dtype));
}

Error plan_index(KernelContext& ctx, const char* op, const Tensor& self, const TensorList& indices,
                 IndexPlan* plan) {
  if (indices.size > static_cast<size_t>(self.dim))
    return ctx.fail(Error::InvalidArgument, "%s: too many indices for a %d-d tensor (%zu given)",
                    op, self.dim, indices.size);
  for (size_t k = 0; k < indices.size; ++k) {
    const Tensor* t = indices[k];
    if (t == nullptr) continue;
    Error e = expect_index_tensor(ctx, op, *t);
    if (e != Error::Ok) return e;
    plan->index[plan->count] = t;
    plan->indexed_dim[plan->count++] = static_cast<int>(k);
  }
  Error e = broadcast_shapes(ctx, op, plan->index, plan->count, plan->bsizes, &plan->bdim);
  if (e != Error::Ok) return e;
  for (int c = 0; c < plan->count; ++c)
    broadcast_strides(*plan->index[c], plan->bsizes, plan->bdim, plan->index_strides[c]);
  int first = plan->count > 0 ? plan->indexed_dim[0] : self.dim;
  bool adjacent = plan->count == 0 || plan->indexed_dim[plan->count - 1] - first == plan->count - 1;
  bool indexed[kMaxDim] = {};
  for (int c = 0; c < plan->count; ++c) indexed[plan->indexed_dim[c]] = true;
  for (int d = 0; d < self.dim; ++d) {
    if (indexed[d]) continue;
    if (adjacent && d < first)
      plan->pre[plan->npre++] = d;
    else
      plan->post[plan->npost++] = d;
  }
  plan->result_dim = plan->npre + plan->bdim + plan->npost;
  if (plan->result_dim > kMaxDim)
    return ctx.fail(Error::Unsupported,
                    "%s: the result would have %d dims, at most %d are supported", op,
                    plan->result_dim, kMaxDim);
  int r = 0;
  for (int i = 0; i < plan->npre; ++i) plan->result_sizes[r++] = self.sizes[plan->pre[i]];
  for (int i = 0; i < plan->bdim; ++i) plan->result_sizes[r++] = plan->bsizes[i];
  for (int i = 0; i < plan->npost; ++i) plan->result_sizes[r++] = self.sizes[plan->post[i]];
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
