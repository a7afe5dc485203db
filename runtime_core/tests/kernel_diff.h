// The harness of kernel_diff_test (kernel_diff_test.cpp, which says what is compared and how):
// building a kernel's arguments, running it, comparing the optimized result with the portable
// one. The cases of each kernel family are in kernel_diff_<family>.cpp.
#pragma once

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../kernels/optimized/optimized.h"
#include "../kernels/portable/convert.h"  // float_to_half: float16 KV caches
#include "heap_allocator.h"
#include "pocket/kernel.h"
#include "thread_pool.h"

namespace kdiff {

using namespace pocket;

inline int g_failures = 0, g_checks = 0;
inline std::mt19937 g_rng(1234);

inline float uniform(float lo = -1.0f, float hi = 1.0f) { return std::uniform_real_distribution<float>(lo, hi)(g_rng); }
inline int64_t pick(std::initializer_list<int64_t> v) { return *(v.begin() + g_rng() % v.size()); }

#define FAIL(...)                  \
  do {                             \
    std::fprintf(stderr, "FAIL "); \
    std::fprintf(stderr, __VA_ARGS__); \
    std::fprintf(stderr, "\n");    \
    ++g_failures;                  \
  } while (0)

// ---- building kernel arguments

struct Buffer {
  std::vector<uint8_t> bytes;
};

// Values with stable addresses (int lists index into `table`).
struct Args {
  std::vector<Value> table = std::vector<Value>(256);
  size_t used = 0;
  std::deque<Buffer> buffers;
  std::vector<Value*> ptrs;

  Value* add(const Value& v) {
    if (used == table.size()) std::abort();  // list items point into table: never reallocate
    table[used] = v;
    return &table[used++];
  }
  Value* none() { return add(Value()); }
  Value* integer(int64_t i) {
    Value v;
    v.tag = Value::Tag::Int;
    v.i = i;
    return add(v);
  }
  Value* real(double d) {
    Value v;
    v.tag = Value::Tag::Double;
    v.d = d;
    return add(v);
  }
  Value* boolean(bool b) {
    Value v;
    v.tag = Value::Tag::Bool;
    v.b = b;
    return add(v);
  }
  Value* text(const char* s) {  // a string argument (s outlives the call: a literal)
    Value v;
    v.tag = Value::Tag::String;
    v.str.data = s;
    v.str.size = std::strlen(s);
    return add(v);
  }
  Value* ints(std::vector<int64_t> items) {
    std::vector<uint32_t> idx;
    for (int64_t i : items) idx.push_back(static_cast<uint32_t>(integer(i) - table.data()));
    buffers.push_back({std::vector<uint8_t>(idx.size() * 4)});
    std::memcpy(buffers.back().bytes.data(), idx.data(), idx.size() * 4);
    Value v;
    v.tag = Value::Tag::IntList;
    v.int_list = {reinterpret_cast<const uint32_t*>(buffers.back().bytes.data()), idx.size(), table.data()};
    return add(v);
  }
  // A tensor of `sizes` over `data` (copied); `strides` empty: contiguous.
  template <typename T>
  Value* tensor(ScalarType t, std::vector<int64_t> sizes, const std::vector<T>& data, std::vector<int64_t> strides = {}) {
    buffers.push_back({std::vector<uint8_t>(data.size() * sizeof(T))});  // exact: ASan sees over-reads
    std::memcpy(buffers.back().bytes.data(), data.data(), data.size() * sizeof(T));
    Value v;
    v.tag = Value::Tag::Tensor;
    v.tensor.dtype = t;
    v.tensor.dim = static_cast<int32_t>(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) v.tensor.sizes[i] = sizes[i];
    v.tensor.set_contiguous_strides();
    for (size_t i = 0; i < strides.size(); ++i) v.tensor.strides[i] = strides[i];
    v.tensor.data = buffers.back().bytes.data();
    v.tensor.capacity = data.size() * sizeof(T);
    return add(v);
  }
  Value* floats(std::vector<int64_t> sizes, const std::vector<float>& data, std::vector<int64_t> strides = {}) {
    return tensor(ScalarType::Float32, sizes, data, strides);
  }
  Value* output(int64_t numel) { return floats({numel}, std::vector<float>(numel, NAN)); }
  Value* output_q8(int64_t numel) { return tensor(ScalarType::Int8, {numel}, std::vector<int8_t>(numel, -99)); }
};

// The portable kernel of `name` ("pocket::conv2d_packed"); aborts when there is none.
inline KernelFn portable_kernel(const char* name) {
  for (const KernelEntry& e : portable_kernels())
    if (std::strcmp(e.name, name) == 0) return e.fn;
  std::abort();
}

inline std::vector<float> random_floats(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (float& x : v) x = uniform() * scale;
  return v;
}

inline std::vector<float> abs_of(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

// Runs `fn` on the arguments `make` puts in Args::ptrs (the outputs last) and returns the
// floats (or int8 values as floats) of the last `outputs` arguments, one after the other.
inline std::vector<float> run(KernelFn fn, const std::function<void(Args&)>& make, int threads, const char* what,
                              size_t outputs = 1) {
  Args a;
  make(a);
  HeapAllocator temp;
  Diag diag;
  KernelContext ctx;
  ctx.temp = &temp;
  ctx.diag = &diag;
  // One pool for the whole test: qemu-user keeps the memory of every thread it started.
  static WorkerPool pool(2);
  if (threads > 1) ctx.threads = &pool;
  Error e = fn(ctx, a.ptrs.data());
  if (e != Error::Ok) {
    FAIL("%s: kernel failed: %s", what, diag.message);
    return {};
  }
  std::vector<float> all;
  for (size_t k = a.ptrs.size() - outputs; k < a.ptrs.size(); ++k) {
    const Tensor& out = a.ptrs[k]->tensor;
    if (out.dtype == ScalarType::Int8)
      all.insert(all.end(), out.data_as<int8_t>(), out.data_as<int8_t>() + out.numel());
    else
      all.insert(all.end(), out.data_as<float>(), out.data_as<float>() + out.numel());
  }
  return all;
}

// Compares the optimized result with the portable one: |got - want| <= tol * (|want| + mag),
// or both the same infinity, or both NaN (a NaN input propagates in both).
inline void compare(const char* what, const std::vector<float>& got, const std::vector<float>& want,
                    const std::vector<float>& mag, double tol) {
  ++g_checks;
  if (got.size() != want.size()) {
    FAIL("%s: %zu outputs, expected %zu", what, got.size(), want.size());
    return;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) continue;
    const double bound = tol * (std::fabs(want[i]) + (mag.empty() ? 0.0 : std::fabs(mag[i])));
    if (!(std::fabs(double(got[i]) - want[i]) <= bound)) {
      FAIL("%s: output %zu is %.9g, portable %.9g (bound %.3g)", what, i, got[i], want[i], bound);
      return;
    }
  }
}

// The optimized kernel `fast` on 1 and 2 threads against `want`, the portable result (as
// compare).
inline void compare_threads(const char* what, KernelFn fast, const std::function<void(Args&)>& make,
                            const std::vector<float>& want, const std::vector<float>& mag, double tol) {
  for (int threads : {1, 2}) {
    const std::string w = std::string(what) + " threads=" + std::to_string(threads);
    compare(w.c_str(), run(fast, make, threads, w.c_str()), want, mag, tol);
  }
}

// One case: `make(args, absolute)` builds the op's arguments (absolute: inputs replaced by
// their absolute values, for the magnitude bound); the output is the last argument.
inline void check_case(const std::string& what, KernelFn portable, KernelFn fast,
                       const std::function<void(Args&, bool)>& make, double tol, bool use_abs = true) {
  auto build = [&](bool absolute) { return [&make, absolute](Args& a) { make(a, absolute); }; };
  const std::vector<float> want = run(portable, build(false), 1, what.c_str());
  const std::vector<float> mag = use_abs ? run(portable, build(true), 1, what.c_str()) : std::vector<float>();
  compare_threads(what.c_str(), fast, build(false), want, mag, tol);
}

constexpr double kFloatTol = 1e-5;

struct ConvCase {
  int64_t batch, c_in, c_out, h, w, k, stride, pad, groups, dil = 1;
};

// The per-op tests (OpTest in kernel_diff_test.cpp): portable and optimized kernel, the set's name.
void test_linear(KernelFn portable, KernelFn fast, const char* set);
void test_matmul(const char* op, KernelFn portable, KernelFn fast, const char* set);
void test_convolution(KernelFn portable, KernelFn fast, const char* set);
void test_convolution_clamp(KernelFn portable, KernelFn fast, const char* set);
void test_sdpa(KernelFn portable, KernelFn fast, const char* set);
void test_rms_norm(KernelFn portable, KernelFn fast, const char* set);
void test_rope(KernelFn portable, KernelFn fast, const char* set);
void test_swiglu(KernelFn portable, KernelFn fast, const char* set);
void test_layer_norm(KernelFn portable, KernelFn fast, const char* set);
void test_softmax(KernelFn portable, KernelFn fast, const char* set);
void test_gelu(KernelFn portable, KernelFn fast, const char* set);
void test_hard_activation(const char* op, KernelFn portable, KernelFn fast, const char* set);
void test_logistic(const char* op, KernelFn portable, KernelFn fast, const char* set);
void test_permute(KernelFn portable, KernelFn fast, const char* set);
void test_lookup_int8(KernelFn portable, KernelFn fast, const char* set);
void test_linear_q(KernelFn portable, KernelFn fast, const char* set);
void test_linear_q_packed(KernelFn portable, KernelFn fast, const char* set);
void test_conv2d_packed(KernelFn portable, KernelFn fast, const char* set);
void test_conv2d_packed_act(KernelFn portable, KernelFn fast, const char* set);
void test_conv2d_winograd(KernelFn portable, KernelFn fast, const char* set);
void test_conv2d_winograd_act(KernelFn portable, KernelFn fast, const char* set);
void test_max_pool_channels_last(KernelFn portable, KernelFn fast, const char* set);
void test_conv_q8(const char* op, KernelFn portable, KernelFn fast, const char* set);

}  // namespace kdiff
