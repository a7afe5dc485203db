// Element dtype conversion for the portable kernels: float16 and bfloat16 bits, loads and
// stores of any dtype through double or int64 (torch's rounding and wrapping), Scalar
// arguments encoded as one element, and fills. Nothing here allocates.
#pragma once

#include <cstring>

#include "util.h"

namespace pocket {
namespace detail {

bool is_integral(ScalarType t);  // the int types and bool
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
inline float bfloat16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t float_to_bfloat16(float f);  // round to nearest even

// Element i of p (dtype t) as a double (floating dtypes) or int64 (integral dtypes).
double load_double(const void* p, ScalarType t, int64_t i);
int64_t load_int64(const void* p, ScalarType t, int64_t i);
// Stores v as element i. Floating to integral truncates toward zero to int64 (saturating,
// NaN -> 0) and then wraps to the target width, which is what torch does on x86 for
// values in int64 range; float16/bfloat16 round to nearest even.
void store_double(void* p, ScalarType t, int64_t i, double v);
void store_int64(void* p, ScalarType t, int64_t i, int64_t v);

// Encodes a Scalar argument as one element of dtype t (element_size(t) bytes at `element`);
// fails like torch when the value does not fit ("value cannot be converted ...").
Error scalar_to_element(KernelContext& ctx, const char* op, const Value& s, ScalarType t,
                        void* element);

// Writes `element` into every element of the contiguous tensor `out`.
void fill_elements(const Tensor& out, const void* element);

}  // namespace detail
}  // namespace pocket
