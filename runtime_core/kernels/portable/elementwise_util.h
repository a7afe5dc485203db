// Helpers for the elementwise kernels (op_add.cpp, op_where.cpp, op_sigmoid.cpp, ...): torch's
// type promotion, Scalar arguments as 0-d tensors, and unary, binary and ternary loops over
// broadcast, possibly strided inputs (converting with load_as/store_as from util.h). Nothing
// here allocates.
//
// The dtype rule: an op computes in one "compute" dtype C. For arithmetic it is the output's
// dtype (the exporter gives outputs the dtype torch computed); comparisons use torch's promoted
// dtype of their inputs. Inputs of another dtype are converted to C element by element, as
// torch casts its inputs to the common dtype, and results are converted to the output's dtype.
// Float16 and BFloat16 are not supported yet: kernels fail with Unsupported on them.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "parallel_util.h"
#include "util.h"

namespace pocket {
namespace detail {

// ---- dtypes of C++ types

template <typename T>
struct DtypeOf;
template <> struct DtypeOf<float> { static constexpr ScalarType value = ScalarType::Float32; };
template <> struct DtypeOf<double> { static constexpr ScalarType value = ScalarType::Float64; };
template <> struct DtypeOf<int64_t> { static constexpr ScalarType value = ScalarType::Int64; };
template <> struct DtypeOf<int32_t> { static constexpr ScalarType value = ScalarType::Int32; };
template <> struct DtypeOf<int16_t> { static constexpr ScalarType value = ScalarType::Int16; };
template <> struct DtypeOf<int8_t> { static constexpr ScalarType value = ScalarType::Int8; };
template <> struct DtypeOf<uint8_t> { static constexpr ScalarType value = ScalarType::UInt8; };
template <> struct DtypeOf<bool> { static constexpr ScalarType value = ScalarType::Bool; };

// Fails with Unsupported unless the kernels can read and write t's dtype.
Error check_supported(KernelContext& ctx, const char* op, const Tensor& t);

// torch.promote_types for two dtypes.
ScalarType promote_types(ScalarType a, ScalarType b);
// torch's result dtype of two tensors: a 0-d tensor only decides the category (bool, integer,
// floating) when the other tensor has dims, as in torch.result_type.
ScalarType promote_tensors(const Tensor& a, const Tensor& b);
// torch's result dtype of a tensor and a Scalar (a double Scalar counts as float32).
ScalarType promote_with_scalar(ScalarType t, const Value& s);

// Whether a String value equals s.
bool string_is(const Value& v, const char* s);

// A 0-d tensor holding a Scalar argument converted to `dtype`, so that Scalar overloads reuse
// the tensor loops. Not copyable: the tensor points into the object.
class ScalarTensor {
 public:
  ScalarTensor(const Value& s, ScalarType dtype);
  ScalarTensor(const ScalarTensor&) = delete;
  ScalarTensor& operator=(const ScalarTensor&) = delete;
  const Tensor& tensor() const { return tensor_; }

 private:
  alignas(8) unsigned char storage_[8] = {0};
  Tensor tensor_;
};

// The .Tensor and .Scalar overloads of a binary op computed in the output's dtype by
// f(ctx, self, other, out), args being (self, other, out): a Scalar `other` becomes a 0-d
// tensor of the output's dtype.
template <typename F>
Error binary_overloads(KernelContext& ctx, Value** args, F&& f) {
  Tensor& out = args[2]->tensor;
  if (args[1]->is_tensor()) return f(ctx, args[0]->tensor, args[1]->tensor, out);
  ScalarTensor other(*args[1], out.dtype);
  return f(ctx, args[0]->tensor, other.tensor(), out);
}

// ---- dispatch on the compute dtype, by the kinds of dtypes an op accepts

enum class Kinds { All, Numeric, Floating, Integral };  // Numeric: no bool; Integral: with bool

template <Kinds K, typename T>
constexpr bool kind_accepts() {
  if (K == Kinds::Floating) return std::is_floating_point<T>::value;
  if (K == Kinds::Integral) return !std::is_floating_point<T>::value;
  if (K == Kinds::Numeric) return !std::is_same<T, bool>::value;
  return true;
}

const char* kinds_name(Kinds k);

template <Kinds K, typename T, typename F>
bool call_if_accepted(F& f) {
  if constexpr (kind_accepts<K, T>()) {
    f(T{});
    return true;
  } else {
    return false;
  }
}

// Calls f(T{}) with T the C++ type of `t` when K accepts it (only those T are instantiated).
template <Kinds K, typename F>
Error dispatch_kinds(KernelContext& ctx, const char* op, ScalarType t, F&& f) {
  bool ok = false;
  switch (t) {
    case ScalarType::Float32: ok = call_if_accepted<K, float>(f); break;
    case ScalarType::Float64: ok = call_if_accepted<K, double>(f); break;
    case ScalarType::Int64: ok = call_if_accepted<K, int64_t>(f); break;
    case ScalarType::Int32: ok = call_if_accepted<K, int32_t>(f); break;
    case ScalarType::Int16: ok = call_if_accepted<K, int16_t>(f); break;
    case ScalarType::Int8: ok = call_if_accepted<K, int8_t>(f); break;
    case ScalarType::UInt8: ok = call_if_accepted<K, uint8_t>(f); break;
    case ScalarType::Bool: ok = call_if_accepted<K, bool>(f); break;
    default: break;
  }
  if (ok) return Error::Ok;
  return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported (%s expected)", op,
                  scalar_type_name(t), kinds_name(K));
}

// ---- arithmetic as torch defines it

// maximum/minimum that propagate NaN (torch.maximum, clamp).
template <typename T>
inline T max_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a > b ? a : b;
}
template <typename T>
inline T min_nan(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a < b ? a : b;
}

// -x for floats; two's complement negation for integers (INT_MIN stays INT_MIN, no overflow).
template <typename T>
inline T negate(T x) {
  if constexpr (std::is_floating_point<T>::value) {
    return -x;
  } else {
    return static_cast<T>(uint64_t(0) - static_cast<uint64_t>(x));
  }
}

// Integer x / y truncated toward zero; y != 0 (the caller checks). MIN / -1 wraps to MIN
// instead of trapping.
template <typename T>
inline T div_trunc_int(T x, T y) {
  if constexpr (std::is_signed<T>::value) {
    if (y == -1) return negate(x);
  }
  return static_cast<T>(x / y);
}

// Integer x % y with C's sign (of x): torch.fmod; y != 0.
template <typename T>
inline T fmod_int(T x, T y) {
  if constexpr (std::is_signed<T>::value) {
    if (y == -1) return 0;
  }
  return static_cast<T>(x % y);
}

// Integer x // y rounded toward negative infinity (Python's floor division); y != 0.
template <typename T>
inline T div_floor_int(T x, T y) {
  T q = div_trunc_int(x, y);
  if constexpr (std::is_signed<T>::value) {
    if ((x < 0) != (y < 0) && fmod_int(x, y) != 0) q = static_cast<T>(q - 1);
  }
  return q;
}

// Integer remainder with the sign of y (Python's %): torch.remainder; y != 0.
template <typename T>
inline T remainder_int(T x, T y) {
  T r = fmod_int(x, y);
  if constexpr (std::is_signed<T>::value) {
    if (r != 0 && (r < 0) != (y < 0)) r = static_cast<T>(r + y);
  }
  return r;
}

// Floating remainder with the sign of y (torch.remainder).
template <typename T>
inline T remainder_float(T x, T y) {
  T r = std::fmod(x, y);
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  return r;
}

// Floating floor division as Python computes it: from fmod, so that x == q * y + r holds
// better than with floor(x / y); a zero divisor gives x / y (inf or nan).
template <typename T>
inline T div_floor_float(T x, T y) {
  if (y == 0) return x / y;
  T r = std::fmod(x, y);
  T q = (x - r) / y;
  if (r != 0 && (y < 0) != (r < 0)) q -= 1;
  if (q == 0) return std::copysign(T(0), x / y);
  T f = std::floor(q);
  return q - f > T(0.5) ? f + 1 : f;
}

// ---- loops. `out` is contiguous (resized by the caller); inputs may be strided and
// broadcast. Inputs are converted to C, results to the output's dtype.

// Whether t can be read with the output's flat index (contiguous, nothing broadcast).
inline bool flat_like(const Tensor& t, const Tensor& out) {
  return t.is_contiguous() && t.numel() == out.numel();
}

template <typename C, typename R, typename F>
void unary_rows(const Tensor& in, Tensor& out, F& f, int64_t r0, int64_t r1) {
  int64_t strides[1][kMaxDim] = {};
  for (int d = 0; d < in.dim; ++d) strides[0][d] = in.strides[d];
  int64_t i = r0 * (in.dim == 0 ? 1 : in.sizes[in.dim - 1]);
  if (in.dtype == DtypeOf<C>::value && out.dtype == DtypeOf<R>::value) {
    const C* x = in.data_as<const C>();
    R* y = out.data_as<R>();
    for_each_offset_rows<1>(in.sizes, in.dim, strides, r0, r1,
                            [&](const int64_t* o) { y[i++] = static_cast<R>(f(x[o[0]])); });
    return;
  }
  for_each_offset_rows<1>(in.sizes, in.dim, strides, r0, r1, [&](const int64_t* o) {
    C x = load_as<C>(in.data, in.dtype, o[0]);
    store_as<R>(out.data, out.dtype, i++, static_cast<R>(f(x)));
  });
}

// z[j] = f(x[j · sx], y[j · sy]) for j < n: one row of binary_rows. Unit and zero strides (a
// row of two operands, or of one and a broadcast number: a squeeze-excitation scale) have
// loops of their own, which the compiler vectorizes.
template <typename C, typename R, typename F>
void binary_row(const C* x, int64_t sx, const C* y, int64_t sy, R* z, int64_t n, F& f) {
  if (sx == 1 && sy == 1) {
    for (int64_t j = 0; j < n; ++j) z[j] = static_cast<R>(f(x[j], y[j]));
  } else if (sx == 1 && sy == 0) {
    const C b = *y;
    for (int64_t j = 0; j < n; ++j) z[j] = static_cast<R>(f(x[j], b));
  } else if (sx == 0 && sy == 1) {
    const C a = *x;
    for (int64_t j = 0; j < n; ++j) z[j] = static_cast<R>(f(a, y[j]));
  } else {
    for (int64_t j = 0; j < n; ++j) z[j] = static_cast<R>(f(x[j * sx], y[j * sy]));
  }
}

template <typename C, typename R, typename F>
void binary_rows(const Tensor& a, const Tensor& b, Tensor& out, const int64_t (*strides)[kMaxDim], F& f,
                 int64_t r0, int64_t r1) {
  const int64_t inner = out.dim == 0 ? 1 : out.sizes[out.dim - 1];
  int64_t i = r0 * inner;
  constexpr ScalarType c = DtypeOf<C>::value;
  if (a.dtype == c && b.dtype == c && out.dtype == DtypeOf<R>::value) {
    const C* x = a.data_as<const C>();
    const C* y = b.data_as<const C>();
    R* z = out.data_as<R>();
    const int64_t sx = out.dim == 0 ? 0 : strides[0][out.dim - 1], sy = out.dim == 0 ? 0 : strides[1][out.dim - 1];
    for_each_row<2>(out.sizes, out.dim, strides, r0, r1, [&](const int64_t* o) {
      binary_row(x + o[0], sx, y + o[1], sy, z + i, inner, f);
      i += inner;
    });
    return;
  }
  for_each_offset_rows<2>(out.sizes, out.dim, strides, r0, r1, [&](const int64_t* o) {
    C x = load_as<C>(a.data, a.dtype, o[0]);
    C y = load_as<C>(b.data, b.dtype, o[1]);
    store_as<R>(out.data, out.dtype, i++, static_cast<R>(f(x, y)));
  });
}

// Runs rows(r0, r1) over the rows of `out` (a row: its last dim), or flat(i0, i1) over its
// elements when `flat`: in parallel for a floating compute type C, whose ops are pure functions
// of their operands; integer ones may record an error (a division by zero) and stay on the
// calling thread.
template <typename C, typename Rows, typename Flat>
void elementwise_loop(KernelContext& ctx, const Tensor& out, bool flat, Rows&& rows, Flat&& flat_range) {
  const int64_t n = out.numel(), inner = out.dim == 0 ? 1 : out.sizes[out.dim - 1];
  const int64_t row_n = row_count(out.sizes, out.dim);
  if constexpr (!std::is_floating_point<C>::value) {
    if (flat) flat_range(int64_t{0}, n);
    else rows(int64_t{0}, row_n);
  } else if (flat) {
    ctx.parallel_for(n, grain_for(1), [&](int64_t i0, int64_t i1) { flat_range(i0, i1); });
  } else {
    ctx.parallel_for(row_n, grain_for(inner), [&](int64_t r0, int64_t r1) { rows(r0, r1); });
  }
}

template <typename C, typename R, typename F>
void unary_loop(KernelContext& ctx, const Tensor& in, Tensor& out, F& f) {
  const bool flat = in.dtype == DtypeOf<C>::value && out.dtype == DtypeOf<R>::value && flat_like(in, out);
  elementwise_loop<C>(ctx, out, flat, [&](int64_t r0, int64_t r1) { unary_rows<C, R>(in, out, f, r0, r1); },
                      [&](int64_t i0, int64_t i1) {
                        const C* x = in.data_as<const C>();
                        R* y = out.data_as<R>();
                        for (int64_t i = i0; i < i1; ++i) y[i] = static_cast<R>(f(x[i]));
                      });
}

template <typename C, typename R, typename F>
void binary_loop(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out,
                 const int64_t (*strides)[kMaxDim], F& f) {
  constexpr ScalarType c = DtypeOf<C>::value;
  const bool flat = a.dtype == c && b.dtype == c && out.dtype == DtypeOf<R>::value && flat_like(a, out) &&
                    flat_like(b, out);
  elementwise_loop<C>(ctx, out, flat, [&](int64_t r0, int64_t r1) { binary_rows<C, R>(a, b, out, strides, f, r0, r1); },
                      [&](int64_t i0, int64_t i1) {
                        const C* x = a.data_as<const C>();
                        const C* y = b.data_as<const C>();
                        R* z = out.data_as<R>();
                        for (int64_t i = i0; i < i1; ++i) z[i] = static_cast<R>(f(x[i], y[i]));
                      });
}

// f(a, b, c) with a converted to A and b, c to C (where: A is bool).
template <typename A, typename C, typename F>
void ternary_loop(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& out,
                  const int64_t (*strides)[kMaxDim], F& f) {
  int64_t i = 0;
  constexpr ScalarType t = DtypeOf<C>::value;
  if (a.dtype == DtypeOf<A>::value && b.dtype == t && c.dtype == t && out.dtype == t) {
    const A* x = a.data_as<const A>();
    const C* y = b.data_as<const C>();
    const C* z = c.data_as<const C>();
    C* w = out.data_as<C>();
    for_each_offset<3>(out.sizes, out.dim, strides, [&](const int64_t* o) {
      w[i++] = static_cast<C>(f(x[o[0]], y[o[1]], z[o[2]]));
    });
    return;
  }
  for_each_offset<3>(out.sizes, out.dim, strides, [&](const int64_t* o) {
    A x = load_as<A>(a.data, a.dtype, o[0]);
    C y = load_as<C>(b.data, b.dtype, o[1]);
    C z = load_as<C>(c.data, c.dtype, o[2]);
    store_as<C>(out.data, out.dtype, i++, static_cast<C>(f(x, y, z)));
  });
}

// Checks the dtypes of `n` inputs and `out`, broadcasts the inputs' shapes, resizes `out` to
// the result and sets strides[k] to input k's strides in that shape.
Error broadcast_inputs(KernelContext& ctx, const char* op, const Tensor* const* ins, int n,
                       Tensor& out, int64_t (*strides)[kMaxDim]);

// ---- whole kernels: check, resize, dispatch on `compute` (which K must accept), loop.

// out = f(in), f computing in C; the result is stored in out's dtype.
template <Kinds K, typename F>
Error unary_op(KernelContext& ctx, const char* op, ScalarType compute, const Tensor& in,
               Tensor& out, F&& f) {
  Error e = check_supported(ctx, op, in);
  if (e == Error::Ok) e = check_supported(ctx, op, out);
  if (e == Error::Ok) e = resize_output(ctx, op, out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  return dispatch_kinds<K>(ctx, op, compute, [&](auto tag) {
    using C = decltype(tag);
    unary_loop<C, C>(ctx, in, out, f);
  });
}

// Unary elementwise op in the output dtype (float kernels: float32 or float64), split over the
// threads as unary_loop splits (f only reads what it captures).
template <typename F>
Error unary_float(KernelContext& ctx, const char* op, const Tensor& in, Tensor& out, F&& f) {
  if (in.dtype != out.dtype)
    return ctx.fail(Error::InvalidArgument, "%s: input dtype %s differs from output dtype %s", op,
                    scalar_type_name(in.dtype), scalar_type_name(out.dtype));
  Error e = resize_output(ctx, op, out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  return dispatch_float(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(ctx, in, out, f);
  });
}

// exp, sin, sigmoid, ...: floating output (its dtype is torch's); integer and bool inputs are
// converted, as torch promotes them.
template <typename F>
Error unary_to_float(KernelContext& ctx, const char* op, Value** args, F&& f) {
  Tensor& out = args[1]->tensor;
  return unary_op<Kinds::Floating>(ctx, op, out.dtype, args[0]->tensor, out, f);
}

// out = f(in) for a bool-valued f (isnan, logical_not); out must be bool.
template <Kinds K, typename F>
Error unary_predicate(KernelContext& ctx, const char* op, ScalarType compute, const Tensor& in,
                      Tensor& out, F&& f) {
  Error e = check_supported(ctx, op, in);
  if (e == Error::Ok) e = expect_dtype(ctx, op, "out", out, ScalarType::Bool);
  if (e == Error::Ok) e = resize_output(ctx, op, out, in.sizes, in.dim);
  if (e != Error::Ok) return e;
  return dispatch_kinds<K>(ctx, op, compute, [&](auto tag) {
    using C = decltype(tag);
    unary_loop<C, bool>(ctx, in, out, f);
  });
}

// out = f(a, b) over broadcast a and b, f computing in C.
template <Kinds K, typename F>
Error binary_op(KernelContext& ctx, const char* op, ScalarType compute, const Tensor& a,
                const Tensor& b, Tensor& out, F&& f) {
  const Tensor* ins[2] = {&a, &b};
  int64_t strides[2][kMaxDim];
  Error e = broadcast_inputs(ctx, op, ins, 2, out, strides);
  if (e != Error::Ok) return e;
  return dispatch_kinds<K>(ctx, op, compute, [&](auto tag) {
    using C = decltype(tag);
    binary_loop<C, C>(ctx, a, b, out, strides, f);
  });
}

// out = f(a, b) for a bool-valued f (comparisons, logical ops); out must be bool.
template <Kinds K, typename F>
Error binary_predicate(KernelContext& ctx, const char* op, ScalarType compute, const Tensor& a,
                       const Tensor& b, Tensor& out, F&& f) {
  Error e = expect_dtype(ctx, op, "out", out, ScalarType::Bool);
  if (e != Error::Ok) return e;
  const Tensor* ins[2] = {&a, &b};
  int64_t strides[2][kMaxDim];
  e = broadcast_inputs(ctx, op, ins, 2, out, strides);
  if (e != Error::Ok) return e;
  return dispatch_kinds<K>(ctx, op, compute, [&](auto tag) {
    using C = decltype(tag);
    binary_loop<C, bool>(ctx, a, b, out, strides, f);
  });
}

// logical_and/or/xor: inputs of any dtype read as bool (nonzero is true), bool output.
template <typename F>
Error logical_binary(KernelContext& ctx, const char* op, Value** args, F&& f) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  Error e = expect_dtype(ctx, op, "out", out, ScalarType::Bool);
  if (e != Error::Ok) return e;
  const Tensor* ins[2] = {&a, &b};
  int64_t strides[2][kMaxDim];
  e = broadcast_inputs(ctx, op, ins, 2, out, strides);
  if (e == Error::Ok) binary_loop<bool, bool>(ctx, a, b, out, strides, f);
  return e;
}

// eq/ne/lt/le/gt/ge: compared in torch's promoted dtype, bool out.
template <typename F>
Error compare_tensors(KernelContext& ctx, const char* op, Value** args, F&& f) {
  const Tensor& a = args[0]->tensor;
  const Tensor& b = args[1]->tensor;
  return binary_predicate<Kinds::All>(ctx, op, promote_tensors(a, b), a, b, args[2]->tensor, f);
}

template <typename F>
Error compare_scalar(KernelContext& ctx, const char* op, Value** args, F&& f) {
  const Tensor& a = args[0]->tensor;
  ScalarType compute = promote_with_scalar(a.dtype, *args[1]);
  ScalarTensor b(*args[1], compute);
  return binary_predicate<Kinds::All>(ctx, op, compute, a, b.tensor(), args[2]->tensor, f);
}

}  // namespace detail
}  // namespace pocket
