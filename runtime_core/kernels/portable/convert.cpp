#include "convert.h"

#include <cfloat>
#include <cmath>
#include <limits>

#include "shape_util.h"  // copy_element

namespace pocket {
namespace detail {

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

}  // namespace detail
}  // namespace pocket
