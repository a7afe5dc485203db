// Differential test of the optimized kernels against the portable ones (as ggml's
// test-backend-ops does), driven by the optimized kernel table: for every kernel set this
// CPU can run (e.g. avx2, avx512, avx512vnni; neon, neondot) and every op the set
// optimizes, random inputs (odd sizes, tails shorter than a vector, M in {1, 2, 7, 33})
// go through both kernels, on 1 and 2 threads, and the results must agree:
//   - float results within 1e-5 of the sum of the absolute terms (computed by running the
//     portable kernel on absolute values where the op allows, else a bound);
//   - linear_q with int8 activations on inputs built so that every scale is 1: integer
//     results, which must be equal bit for bit (the integer paths are exact);
//   - conv2d_q8 and conv2d_q8_packed: identical results (exact sums, the same scaling).
//   - conv2d_packed (channels-last fp32, packed weights, residual, bounds): within 1e-5 of the
//     unclamped portable result on absolute values.
//   - max_pool2d_channels_last: identical results.
//   - linear_q_packed: float32 scaling (the portable kernel: double), within 1e-5 of Σ|x|·max|w|;
//     on unit scales integers, bit-exact.
//   - linear_q and linear_q_packed with float16 scales and mins (GGUF's d and m): as above, and
//     identical to the same weight with float32 scales of the same values (both kernels).
// An op in the table without a test here is a failure. Runs under qemu-aarch64 in the
// cross build, so inputs stay small.
//
//   kernel_diff_test [--expect-set NAME]   (fail unless the best set for this CPU is NAME)
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

using namespace pocket;

namespace {

int g_failures = 0, g_checks = 0;
std::mt19937 g_rng(1234);

float uniform(float lo = -1.0f, float hi = 1.0f) { return std::uniform_real_distribution<float>(lo, hi)(g_rng); }
int64_t pick(std::initializer_list<int64_t> v) { return *(v.begin() + g_rng() % v.size()); }

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
};

std::vector<float> random_floats(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (float& x : v) x = uniform() * scale;
  return v;
}

std::vector<float> abs_of(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

// Runs `fn` on the arguments `make` puts in Args::ptrs (the output last) and returns the
// output floats.
std::vector<float> run(KernelFn fn, const std::function<void(Args&)>& make, int threads, const char* what) {
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
  const Tensor& out = a.ptrs.back()->tensor;
  const float* y = out.data_as<float>();
  return std::vector<float>(y, y + out.numel());
}

// Compares the optimized result with the portable one: |got - want| <= tol * (|want| + mag).
void compare(const char* what, const std::vector<float>& got, const std::vector<float>& want,
             const std::vector<float>& mag, double tol) {
  ++g_checks;
  if (got.size() != want.size()) {
    FAIL("%s: %zu outputs, expected %zu", what, got.size(), want.size());
    return;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = tol * (std::fabs(want[i]) + (mag.empty() ? 0.0 : std::fabs(mag[i])));
    if (!(std::fabs(double(got[i]) - want[i]) <= bound)) {
      FAIL("%s: output %zu is %.9g, portable %.9g (bound %.3g)", what, i, got[i], want[i], bound);
      return;
    }
  }
}

// One case: `make(args, absolute)` builds the op's arguments (absolute: inputs replaced by
// their absolute values, for the magnitude bound); the output is the last argument.
void check_case(const std::string& what, KernelFn portable, KernelFn fast,
                const std::function<void(Args&, bool)>& make, double tol, bool use_abs = true) {
  auto build = [&](bool absolute) { return [&make, absolute](Args& a) { make(a, absolute); }; };
  const std::vector<float> want = run(portable, build(false), 1, what.c_str());
  const std::vector<float> mag = use_abs ? run(portable, build(true), 1, what.c_str()) : std::vector<float>();
  for (int threads : {1, 2}) {
    const std::string w = what + " threads=" + std::to_string(threads);
    compare(w.c_str(), run(fast, build(false), threads, w.c_str()), want, mag, tol);
  }
}

// ---- per-op tests

constexpr double kFloatTol = 1e-5;

void test_linear(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t m : {1, 2, 7, 33})
    for (int64_t k : {1, 3, 8, 17, 70})
      for (int64_t n : {1, 5, 17}) {
        const bool bias = (m + k + n) % 2 == 0;
        auto x = random_floats(m * k), w = random_floats(n * k), b = random_floats(n);
        char what[128];
        std::snprintf(what, sizeof what, "[%s] aten::linear m=%lld k=%lld n=%lld", set, (long long)m, (long long)k,
                      (long long)n);
        check_case(what, portable, fast, [&](Args& a, bool absolute) {
          a.ptrs = {a.floats({m, k}, absolute ? abs_of(x) : x), a.floats({n, k}, absolute ? abs_of(w) : w),
                    bias ? a.floats({n}, absolute ? abs_of(b) : b) : a.none(), a.output(m * n)};
        }, kFloatTol);
      }
}

// mm, bmm, addmm with both operands in either orientation (transposed views: no copies).
void test_matmul(const char* op, KernelFn portable, KernelFn fast, const char* set) {
  const bool batched = std::strcmp(op, "aten::bmm") == 0, add = std::strcmp(op, "aten::addmm") == 0;
  for (int64_t m : {1, 2, 7, 33})
    for (int64_t k : {1, 9, 40})
      for (int64_t n : {1, 6, 35})
        for (int layout = 0; layout < 4; ++layout) {
          const int64_t batch = batched ? 3 : 1;
          const bool ta = layout & 1, tb = layout & 2;
          auto x = random_floats(batch * m * k), y = random_floats(batch * k * n), c = random_floats(n);
          char what[160];
          std::snprintf(what, sizeof what, "[%s] %s m=%lld k=%lld n=%lld a%s b%s", set, op, (long long)m, (long long)k,
                        (long long)n, ta ? "ᵀ" : "", tb ? "ᵀ" : "");
          check_case(what, portable, fast, [&](Args& a, bool absolute) {
            // a (m, k) viewed over storage (k, m) when transposed; b (k, n) over (n, k).
            std::vector<int64_t> asz = {m, k}, bsz = {k, n};
            std::vector<int64_t> ast = ta ? std::vector<int64_t>{1, m} : std::vector<int64_t>{k, 1};
            std::vector<int64_t> bst = tb ? std::vector<int64_t>{1, k} : std::vector<int64_t>{n, 1};
            if (batched) {
              asz.insert(asz.begin(), batch);
              bsz.insert(bsz.begin(), batch);
              ast.insert(ast.begin(), m * k);
              bst.insert(bst.begin(), k * n);
            }
            Value* av = a.floats(asz, absolute ? abs_of(x) : x, ast);
            Value* bv = a.floats(bsz, absolute ? abs_of(y) : y, bst);
            if (add)
              a.ptrs = {a.floats({n}, absolute ? abs_of(c) : c), av, bv, a.real(1.0), a.real(1.0), a.output(m * n)};
            else
              a.ptrs = {av, bv, a.output(batch * m * n)};
          }, kFloatTol);
        }
}

struct ConvCase {
  int64_t batch, c_in, c_out, h, w, k, stride, pad, groups, dil = 1;
};

void test_convolution(KernelFn portable, KernelFn fast, const char* set) {
  std::vector<ConvCase> cases = {
      {1, 5, 7, 3, 9, 1, 1, 0, 1},    {2, 13, 17, 9, 11, 1, 1, 0, 1},  {1, 3, 33, 1, 1, 1, 1, 0, 1},  // 1x1
      {1, 6, 6, 11, 23, 3, 1, 1, 6},  {2, 4, 4, 7, 5, 3, 2, 1, 4},     {1, 3, 3, 12, 37, 3, 2, 1, 3},  // dw 3x3
      {1, 2, 2, 9, 19, 3, 1, 0, 2},   {1, 2, 2, 4, 4, 3, 2, 2, 2},     {1, 3, 3, 2, 2, 3, 1, 1, 3},    // dw edges
      // im2col + GEMM: 7x7 stride 2, batch 2, dilation 2, groups 2 and 4, 1x1 stride 2,
      // several chunks (K = 576: 224 positions a chunk; K = 2304: 64), rows in the padding,
      // odd c_out
      {1, 3, 8, 23, 29, 7, 2, 3, 1},  {2, 8, 16, 13, 11, 3, 1, 1, 1},  {1, 6, 8, 11, 12, 3, 1, 2, 1, 2},
      {2, 8, 8, 7, 9, 3, 1, 1, 2},    {1, 16, 16, 10, 10, 3, 2, 1, 4}, {1, 4, 8, 9, 9, 1, 2, 0, 1},
      {1, 64, 8, 23, 25, 3, 1, 1, 1}, {1, 256, 4, 9, 9, 3, 1, 1, 1},   {1, 4, 4, 3, 5, 3, 1, 3, 1},
      {1, 4, 5, 8, 8, 3, 1, 1, 1},
      {1, 6, 6, 9, 9, 5, 1, 2, 6},    {1, 4, 4, 9, 9, 3, 1, 2, 4, 2},  {1, 4, 4, 6, 7, 3, 1, 1, 2},    // portable
  };
  for (const ConvCase& c : cases) {
    const int64_t span = c.dil * (c.k - 1) + 1;
    const int64_t oh = (c.h + 2 * c.pad - span) / c.stride + 1, ow = (c.w + 2 * c.pad - span) / c.stride + 1;
    auto x = random_floats(c.batch * c.c_in * c.h * c.w), w = random_floats(c.c_out * (c.c_in / c.groups) * c.k * c.k);
    auto b = random_floats(c.c_out);
    char what[160];
    std::snprintf(what, sizeof what, "[%s] aten::convolution x[%lld,%lld,%lld,%lld] k%lld s%lld p%lld d%lld g%lld", set,
                  (long long)c.batch, (long long)c.c_in, (long long)c.h, (long long)c.w, (long long)c.k,
                  (long long)c.stride, (long long)c.pad, (long long)c.dil, (long long)c.groups);
    check_case(what, portable, fast, [&](Args& a, bool absolute) {
      a.ptrs = {a.floats({c.batch, c.c_in, c.h, c.w}, absolute ? abs_of(x) : x),
                a.floats({c.c_out, c.c_in / c.groups, c.k, c.k}, absolute ? abs_of(w) : w),
                a.floats({c.c_out}, absolute ? abs_of(b) : b),
                a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}), a.boolean(false),
                a.ints({0, 0}), a.integer(c.groups), a.output(c.batch * c.c_out * oh * ow)};
    }, kFloatTol);
  }
}

// pocket::convolution_clamp: the convolution cases the optimized kernels take (1x1, depthwise
// 3x3, im2col) with bounds; the magnitude bound is the unclamped portable convolution on
// absolute values.
void test_convolution_clamp(KernelFn portable, KernelFn fast, const char* set) {
  const KernelFn conv = detail::kernel_for("aten::convolution", detail::CpuFeatures());
  const std::vector<ConvCase> cases = {
      {2, 13, 17, 9, 11, 1, 1, 0, 1}, {1, 6, 6, 11, 23, 3, 1, 1, 6}, {2, 4, 4, 7, 5, 3, 2, 1, 4},
      {1, 3, 8, 23, 29, 7, 2, 3, 1},  {1, 8, 12, 9, 10, 3, 2, 1, 1},  {1, 4, 4, 6, 7, 3, 1, 1, 2},
  };
  const double bounds[4][2] = {{0.0, INFINITY}, {0.0, 6.0}, {-INFINITY, 0.5}, {-1.0, 1.0}};
  int i = 0;
  for (const ConvCase& c : cases) {
    const int64_t oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    auto x = random_floats(c.batch * c.c_in * c.h * c.w, 3.0f), w = random_floats(c.c_out * (c.c_in / c.groups) * c.k * c.k);
    auto b = random_floats(c.c_out);
    const double* bound = bounds[i++ % 4];
    char what[160];
    std::snprintf(what, sizeof what, "[%s] pocket::convolution_clamp x[%lld,%lld,%lld,%lld] k%lld s%lld g%lld", set,
                  (long long)c.batch, (long long)c.c_in, (long long)c.h, (long long)c.w, (long long)c.k,
                  (long long)c.stride, (long long)c.groups);
    auto args = [&](Args& a, bool absolute, bool clamp) {
      a.ptrs = {a.floats({c.batch, c.c_in, c.h, c.w}, absolute ? abs_of(x) : x),
                a.floats({c.c_out, c.c_in / c.groups, c.k, c.k}, absolute ? abs_of(w) : w),
                a.floats({c.c_out}, absolute ? abs_of(b) : b), a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}),
                a.ints({c.dil, c.dil})};
      if (clamp) {
        a.ptrs.push_back(a.integer(c.groups));
        a.ptrs.push_back(std::isinf(bound[0]) ? a.none() : a.real(bound[0]));
        a.ptrs.push_back(std::isinf(bound[1]) ? a.none() : a.real(bound[1]));
      } else {
        a.ptrs.push_back(a.boolean(false));
        a.ptrs.push_back(a.ints({0, 0}));
        a.ptrs.push_back(a.integer(c.groups));
      }
      a.ptrs.push_back(a.output(c.batch * c.c_out * oh * ow));
    };
    const std::vector<float> want = run(portable, [&](Args& a) { args(a, false, true); }, 1, what);
    const std::vector<float> mag = run(conv, [&](Args& a) { args(a, true, false); }, 1, what);
    for (int threads : {1, 2}) {
      const std::string wt = std::string(what) + " threads=" + std::to_string(threads);
      compare(wt.c_str(), run(fast, [&](Args& a) { args(a, false, true); }, threads, wt.c_str()), want, mag, kFloatTol);
    }
  }
}

void test_sdpa(KernelFn portable, KernelFn fast, const char* set) {
  struct Case {
    int64_t hq, hkv, t, start, d;
  };
  for (const Case& c : std::vector<Case>{{1, 1, 1, 0, 8}, {4, 2, 1, 20, 64}, {3, 1, 5, 7, 13}, {2, 2, 3, 30, 40},
                                         {6, 3, 1, 50, 37}}) {
    const int64_t s = c.start + c.t + 3;
    auto q = random_floats(c.hq * c.t * c.d, 2.0f), k = random_floats(c.hkv * s * c.d, 2.0f),
         v = random_floats(c.hkv * s * c.d);
    char what[128];
    std::snprintf(what, sizeof what, "[%s] pocket::sdpa hq=%lld hkv=%lld t=%lld start=%lld d=%lld", set,
                  (long long)c.hq, (long long)c.hkv, (long long)c.t, (long long)c.start, (long long)c.d);
    // Softmax weights are positive: the magnitude bound is the output for |v|.
    check_case(what, portable, fast, [&](Args& a, bool absolute) {
      a.ptrs = {a.floats({1, c.hq, c.t, c.d}, q), a.floats({1, c.hkv, s, c.d}, k),
                a.floats({1, c.hkv, s, c.d}, absolute ? abs_of(v) : v),
                a.tensor(ScalarType::Int64, {1}, std::vector<int64_t>{c.start}), a.real(1.0 / std::sqrt(double(c.d))),
                a.output(c.hq * c.t * c.d)};
    }, kFloatTol);
    // Float16 caches (an fp16 KV cache): the optimized driver widens them with the ISA's
    // conversion, the portable one with half_to_float; both exact.
    std::vector<uint16_t> k16(k.size()), v16(v.size()), v16abs(v.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k16[i] = detail::float_to_half(k[i]);
      v16[i] = detail::float_to_half(v[i]);
      v16abs[i] = detail::float_to_half(std::fabs(v[i]));
    }
    const std::string what16 = std::string(what) + " float16 caches";
    check_case(what16, portable, fast, [&](Args& a, bool absolute) {
      a.ptrs = {a.floats({1, c.hq, c.t, c.d}, q), a.tensor(ScalarType::Float16, {1, c.hkv, s, c.d}, k16),
                a.tensor(ScalarType::Float16, {1, c.hkv, s, c.d}, absolute ? v16abs : v16),
                a.tensor(ScalarType::Int64, {1}, std::vector<int64_t>{c.start}), a.real(1.0 / std::sqrt(double(c.d))),
                a.output(c.hq * c.t * c.d)};
    }, kFloatTol);
  }
}

void test_rms_norm(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t rows : {1, 2, 7, 33})
    for (int64_t d : {1, 3, 8, 17, 63, 64}) {
      auto x = random_floats(rows * d, 3.0f), w = random_floats(d);
      char what[96];
      std::snprintf(what, sizeof what, "[%s] pocket::rms_norm rows=%lld d=%lld", set, (long long)rows, (long long)d);
      check_case(what, portable, fast, [&](Args& a, bool absolute) {
        a.ptrs = {a.floats({rows, d}, absolute ? abs_of(x) : x), a.floats({d}, absolute ? abs_of(w) : w),
                  a.real(1e-5), a.output(rows * d)};
      }, kFloatTol);
    }
}

void test_rope(KernelFn portable, KernelFn fast, const char* set) {
  struct Case {
    int64_t b, t, h, d;
  };
  for (const Case& c : std::vector<Case>{{1, 1, 1, 2}, {1, 1, 9, 64}, {1, 3, 5, 6}, {2, 5, 3, 34}, {1, 17, 2, 16}}) {
    auto x = random_floats(c.b * c.t * c.h * c.d), cs = random_floats(c.t * c.d), sn = random_floats(c.t * c.d);
    // Σ|terms| bound: |x|, |cos|, and sin -|sin| in the first half of each row (subtracted), |sin| after.
    std::vector<float> signed_sin = abs_of(sn);
    for (int64_t i = 0; i < c.t * c.d; ++i)
      if (i % c.d < c.d / 2) signed_sin[i] = -signed_sin[i];
    char what[96];
    std::snprintf(what, sizeof what, "[%s] pocket::rope b=%lld t=%lld h=%lld d=%lld", set, (long long)c.b,
                  (long long)c.t, (long long)c.h, (long long)c.d);
    check_case(what, portable, fast, [&](Args& a, bool absolute) {
      a.ptrs = {a.floats({c.b, c.t, c.h, c.d}, absolute ? abs_of(x) : x), a.floats({c.t, c.d}, absolute ? abs_of(cs) : cs),
                a.floats({c.t, c.d}, absolute ? signed_sin : sn), a.output(c.b * c.t * c.h * c.d)};
    }, kFloatTol);
  }
}

void test_swiglu(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t n : {1, 3, 17, 63, 200, 1536}) {
    auto g = random_floats(n, 8.0f), u = random_floats(n);
    g[0] = -100.0f;  // exp(-g) overflows in the portable formula: silu -> -0
    char what[64];
    std::snprintf(what, sizeof what, "[%s] pocket::swiglu n=%lld", set, (long long)n);
    check_case(what, portable, fast, [&](Args& a, bool absolute) {
      a.ptrs = {a.floats({n}, absolute ? abs_of(g) : g), a.floats({n}, absolute ? abs_of(u) : u), a.output(n)};
    }, kFloatTol);
  }
}

// aten::native_layer_norm: all three outputs (y, mean, rstd), weight and bias each optional;
// |difference| <= 1e-5 * (|portable| + 1) (statistics in double in both kernels; y's
// multiply-add of w and b in float in the optimized one).
void test_layer_norm(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t rows : {1, 3, 33})
    for (int64_t cols : {1, 7, 8, 64, 1000})
      for (int affine = 0; affine < 4; ++affine) {
        auto x = random_floats(rows * cols, 3.0f), w = random_floats(cols), b = random_floats(cols);
        for (float& v : x) v += 1.0f;
        auto outputs = [&](KernelFn fn, int threads) {
          Args a;
          a.ptrs = {a.floats({rows, cols}, x), a.ints({cols}), affine & 1 ? a.floats({cols}, w) : a.none(),
                    affine & 2 ? a.floats({cols}, b) : a.none(), a.real(1e-5), a.output(rows * cols), a.output(rows),
                    a.output(rows)};
          HeapAllocator temp;
          Diag diag;
          KernelContext ctx;
          ctx.temp = &temp;
          ctx.diag = &diag;
          static WorkerPool pool(2);
          if (threads > 1) ctx.threads = &pool;
          std::vector<float> all;
          if (fn(ctx, a.ptrs.data()) != Error::Ok) FAIL("[%s] native_layer_norm failed: %s", set, diag.message);
          for (size_t k = 5; k < 8; ++k) {
            const Tensor& t = a.ptrs[k]->tensor;
            all.insert(all.end(), t.data_as<float>(), t.data_as<float>() + t.numel());
          }
          return all;
        };
        const std::vector<float> want = outputs(portable, 1), ones(want.size(), 1.0f);
        for (int threads : {1, 2}) {
          char what[128];
          std::snprintf(what, sizeof what, "[%s] aten::native_layer_norm rows=%lld cols=%lld affine=%d threads=%d", set,
                        (long long)rows, (long long)cols, affine, threads);
          compare(what, outputs(fast, threads), want, ones, kFloatTol);
        }
      }
}

// aten::_softmax along the last dim (and, through the portable path, another); one row
// entry far below the maximum. Bound: 1e-5 * |portable| + 1e-30 (the optimized exp gives
// ~1e-38 where the portable one underflows).
void test_softmax(KernelFn portable, KernelFn fast, const char* set) {
  struct Case {
    std::vector<int64_t> sizes;
    int64_t dim;
  };
  for (const Case& c : std::vector<Case>{{{1}, 0}, {{3, 7}, 1}, {{2, 8}, -1}, {{5, 4, 33}, 2}, {{2, 1000}, -1},
                                         {{4, 6, 5}, 1}}) {
    int64_t n = 1;
    for (int64_t d : c.sizes) n *= d;
    auto x = random_floats(n, 5.0f);
    x[0] = -200.0f;
    char what[96];
    std::snprintf(what, sizeof what, "[%s] aten::_softmax n=%lld dim=%lld", set, (long long)n, (long long)c.dim);
    const std::vector<float> tiny(n, 1e-25f);
    const auto make = [&](Args& a) {
      a.ptrs = {a.floats(c.sizes, x), a.integer(c.dim), a.boolean(false), a.output(n)};
    };
    const std::vector<float> want = run(portable, make, 1, what);
    for (int threads : {1, 2}) compare(what, run(fast, make, threads, what), want, tiny, kFloatTol);
  }
}

// aten::gelu, both approximations, on vector tails and the tails of the distribution.
void test_gelu(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t n : {1, 7, 8, 9, 1000, 3 * 65})
    for (const char* approximate : {"none", "tanh"}) {
      auto x = random_floats(n, 4.0f);
      const float tails[] = {-30.0f, -10.0f, -5.0f, 0.0f, 10.0f, 30.0f};
      for (int64_t i = 0; i < n && i < 6; ++i) x[i] = tails[i];
      char what[96];
      std::snprintf(what, sizeof what, "[%s] aten::gelu n=%lld approximate=%s", set, (long long)n, approximate);
      check_case(what, portable, fast, [&](Args& a, bool absolute) {
        Value s;
        s.tag = Value::Tag::String;
        s.str = {approximate, std::strlen(approximate)};
        a.ptrs = {a.floats({n}, absolute ? abs_of(x) : x), a.add(s), a.output(n)};
      }, kFloatTol);
    }
}

// A random quantized weight (n, k) in the layouts of schema/QUANTIZATION.md; `unit`: all
// scales 1 and mins small integers (exact-integer checks). `half`: scales and mins are passed
// as float16 (their values here are float16 values).
struct QWeight {
  int bits;
  bool sym;
  int64_t n, k, g;
  std::vector<uint8_t> q;
  std::vector<float> scales, mins;
  float wmax = 0;  // max |dequantized weight| bound
  bool half = false;
};

float to_half_value(float v) { return detail::half_to_float(detail::float_to_half(v)); }

std::vector<uint16_t> half_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = detail::float_to_half(v[i]);
  return out;
}

// Scales or mins of w (sizes as given) in w's dtype.
Value* scale_tensor(Args& a, const QWeight& w, std::vector<int64_t> sizes, const std::vector<float>& v) {
  return w.half ? a.tensor(ScalarType::Float16, sizes, half_bits(v)) : a.floats(sizes, v);
}

QWeight make_qweight(int bits, bool sym, int64_t n, int64_t k, int64_t g, bool unit, bool half = false) {
  QWeight w{bits, sym, n, k, g, {}, {}, {}, 0, half};
  const int qmax = bits == 4 ? (sym ? 7 : 15) : (sym ? 127 : 255), qmin = sym ? (bits == 4 ? -8 : -128) : 0;
  std::vector<int> vals(n * k);
  for (int& v : vals) v = qmin + static_cast<int>(g_rng() % (qmax - qmin + 1));
  if (bits == 4) {
    w.q.resize(n * k / 2);
    for (int64_t i = 0; i < n * k / 2; ++i) {
      const int o = sym ? 8 : 0;
      w.q[i] = static_cast<uint8_t>((vals[2 * i] + o) | ((vals[2 * i + 1] + o) << 4));
    }
  } else {
    w.q.resize(n * k);
    for (int64_t i = 0; i < n * k; ++i) w.q[i] = static_cast<uint8_t>(vals[i]);
  }
  for (int64_t i = 0; i < n * (k / g); ++i) {
    float s = unit ? 1.0f : uniform(0.001f, 0.05f);
    float m = sym ? 0.0f : unit ? static_cast<float>(static_cast<int>(g_rng() % 7) - 3) : uniform(-0.5f, 0.5f);
    if (half) {
      s = to_half_value(i % 13 == 4 && !unit ? s * 1e-3f : s);  // some float16 subnormals (< 6.1e-5)
      m = to_half_value(m);
    }
    w.scales.push_back(s);
    if (!sym) w.mins.push_back(m);
    w.wmax = std::max(w.wmax, std::fabs(s) * std::max(std::abs(qmin), qmax) + std::fabs(m));
  }
  return w;
}

void add_linear_q_args(Args& a, const QWeight& w, const std::vector<float>& x, int64_t m, const std::vector<float>* bias,
                       int act_mode) {
  Value* qv = w.bits == 8 && w.sym ? a.tensor(ScalarType::Int8, {w.n, w.k}, w.q)
                                   : a.tensor(ScalarType::UInt8, {w.n, w.bits == 4 ? w.k / 2 : w.k}, w.q);
  a.ptrs = {a.floats({m, w.k}, x), qv, scale_tensor(a, w, {w.n, w.k / w.g}, w.scales),
            w.sym ? a.none() : scale_tensor(a, w, {w.n, w.k / w.g}, w.mins), bias ? a.floats({w.n}, *bias) : a.none(),
            a.integer(w.bits), a.integer(w.g), a.integer(act_mode), a.output(m * w.n)};
}

// A float16-scale weight gives exactly what the same weight with float32 scales of the same
// values gives, on the portable and the optimized kernel (1 thread).
void check_half_scales(KernelFn portable, KernelFn fast, const QWeight& w,
                       const std::function<void(Args&, const QWeight&)>& make, const char* what) {
  QWeight w32 = w;
  w32.half = false;
  auto with = [&make](const QWeight& v) { return [&make, &v](Args& a) { make(a, v); }; };
  const std::string wp = std::string(what) + " float16 = float32 scales (portable)";
  compare(wp.c_str(), run(portable, with(w), 1, wp.c_str()), run(portable, with(w32), 1, wp.c_str()), {}, 0.0);
  const std::string wf = std::string(what) + " float16 = float32 scales";
  compare(wf.c_str(), run(fast, with(w), 1, wf.c_str()), run(fast, with(w32), 1, wf.c_str()), {}, 0.0);
}

void test_linear_q(KernelFn portable, KernelFn fast, const char* set) {
  struct Mode {
    int act_mode;
    int64_t g, k;
  };
  const std::vector<Mode> modes = {{0, 16, 48}, {0, 32, 96}, {0, 6, 30}, {1, 32, 64},  {1, 64, 192},
                                   {1, 10, 50}, {2, 32, 96}, {2, 64, 128}, {1, 96, 192}};
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (const Mode& md : modes)
        for (int64_t m : {1, 2, 7, 33}) {
          const int64_t n = pick({1, 3, 5, 9, 18});
          const bool half = m == 2 || m == 33;  // float16 scales: the gemv and the GEMM path
          const QWeight w = make_qweight(bits, sym, n, md.k, md.g, false, half);
          const auto x = random_floats(m * md.k, 3.0f), b = random_floats(n);
          const bool bias = (m + n) % 2 == 1;
          char what[160];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q %d-bit %s%s act_mode=%d g=%lld m=%lld k=%lld n=%lld",
                        set, bits, sym ? "sym" : "asym", half ? " f16" : "", md.act_mode, (long long)md.g,
                        (long long)m, (long long)md.k, (long long)n);
          // Magnitude bound: Σ|x| · max|w| per row.
          std::vector<float> mag(m * n);
          for (int64_t r = 0; r < m; ++r) {
            float sx = 0;
            for (int64_t c = 0; c < md.k; ++c) sx += std::fabs(x[r * md.k + c]);
            for (int64_t c = 0; c < n; ++c) mag[r * n + c] = sx * w.wmax + (bias ? std::fabs(b[c]) : 0.0f);
          }
          auto make = [&](Args& a) { add_linear_q_args(a, w, x, m, bias ? &b : nullptr, md.act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          // int8 activations: exact integer sums, double scaling (1 ulp-level differences).
          const double tol = md.act_mode == 0 ? kFloatTol : 1e-6;
          for (int threads : {1, 2}) {
            const std::string wt = std::string(what) + " threads=" + std::to_string(threads);
            compare(wt.c_str(), run(fast, make, threads, wt.c_str()), want, mag, tol);
          }
          if (half)
            check_half_scales(
                portable, fast, w,
                [&](Args& a, const QWeight& v) { add_linear_q_args(a, v, x, m, bias ? &b : nullptr, md.act_mode); },
                what);
        }
  // Exact integers: scales 1, integer mins, x integer with |x| max 127 in every row and
  // every block of 32 (activation scale exactly 1): results are integers, bit-exact.
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (int act_mode : {1, 2})
        for (int64_t m : {1, 2, 7, 33}) {
          const int64_t k = 128, g = act_mode == 2 ? 32 : 64, n = 11;
          const QWeight w = make_qweight(bits, sym, n, k, g, true, m == 2);
          std::vector<float> x(m * k);
          for (int64_t i = 0; i < m * k; ++i)
            x[i] = i % 32 == 5 ? 127.0f : static_cast<float>(static_cast<int>(g_rng() % 255) - 127);
          char what[128];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q exact %d-bit %s act_mode=%d m=%lld", set, bits,
                        sym ? "sym" : "asym", act_mode, (long long)m);
          auto make = [&](Args& a) { add_linear_q_args(a, w, x, m, nullptr, act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          compare(what, run(fast, make, 2, what), want, {}, 0.0);
        }
}

// A QWeight (n % 16 == 0, k % 8 == 0) in linear_q_packed's layout (quant_util.h): byte
// [b][t][4c + i] holds, of row 16b + c, 4-bit: columns 8t + i (low nibble) and 8t + 4 + i
// (high); 8-bit: column 4t + i. Scales and mins (n / 16, groups, 16).
QWeight pack_linear(const QWeight& w) {
  QWeight p = w;
  const int64_t step = w.bits == 4 ? 8 : 4, steps = w.k / step, groups = w.k / w.g;
  auto nibble = [&](int64_t r, int64_t c) { return (w.q[r * w.k / 2 + c / 2] >> (c % 2 * 4)) & 0x0F; };
  for (int64_t r = 0; r < w.n; ++r)
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t i = 0; i < 4; ++i)
        p.q[((r / 16) * steps + t) * 64 + r % 16 * 4 + i] =
            w.bits == 4 ? static_cast<uint8_t>(nibble(r, 8 * t + i) | (nibble(r, 8 * t + 4 + i) << 4))
                        : w.q[r * w.k + 4 * t + i];
  for (int64_t r = 0; r < w.n; ++r)
    for (int64_t j = 0; j < groups; ++j) {
      p.scales[((r / 16) * groups + j) * 16 + r % 16] = w.scales[r * groups + j];
      if (!w.sym) p.mins[((r / 16) * groups + j) * 16 + r % 16] = w.mins[r * groups + j];
    }
  return p;
}

void add_linear_q_packed_args(Args& a, const QWeight& p, const std::vector<float>& x, int64_t m,
                              const std::vector<float>* bias, int act_mode) {
  const int64_t blocks = p.n / 16, groups = p.k / p.g, step = p.bits == 4 ? 8 : 4;
  const ScalarType dtype = p.bits == 8 && p.sym ? ScalarType::Int8 : ScalarType::UInt8;
  a.ptrs = {a.floats({m, p.k}, x), a.tensor(dtype, {blocks, p.k / step, 64}, p.q),
            scale_tensor(a, p, {blocks, groups, 16}, p.scales),
            p.sym ? a.none() : scale_tensor(a, p, {blocks, groups, 16}, p.mins),
            bias ? a.floats({p.n}, *bias) : a.none(), a.integer(p.bits), a.integer(p.g), a.integer(act_mode),
            a.output(m * p.n)};
}

void test_linear_q_packed(KernelFn portable, KernelFn fast, const char* set) {
  struct Mode {
    int act_mode;
    int64_t g, k;
  };
  // one step per group, odd step counts, several blocks of 32 per group in act_mode 2
  const std::vector<Mode> modes = {{1, 8, 40}, {1, 24, 72}, {1, 32, 160}, {2, 32, 96}, {2, 64, 128}};
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (const Mode& md : modes)
        for (int64_t m : {1, 2, 3, 5}) {
          const int64_t n = pick({16, 32, 48});
          const bool half = m == 2 || m == 5;  // float16 scales: a full tile and single rows
          const QWeight w = pack_linear(make_qweight(bits, sym, n, md.k, md.g, false, half));
          const auto x = random_floats(m * md.k, 3.0f), b = random_floats(n);
          const bool bias = m % 2 == 1;
          char what[160];
          std::snprintf(what, sizeof what,
                        "[%s] pocket::linear_q_packed %d-bit %s%s act_mode=%d g=%lld m=%lld k=%lld n=%lld", set, bits,
                        sym ? "sym" : "asym", half ? " f16" : "", md.act_mode, (long long)md.g, (long long)m,
                        (long long)md.k, (long long)n);
          std::vector<float> mag(m * n);
          for (int64_t r = 0; r < m; ++r) {
            float sx = 0;
            for (int64_t c = 0; c < md.k; ++c) sx += std::fabs(x[r * md.k + c]);
            for (int64_t c = 0; c < n; ++c) mag[r * n + c] = sx * w.wmax + (bias ? std::fabs(b[c]) : 0.0f);
          }
          auto make = [&](Args& a) { add_linear_q_packed_args(a, w, x, m, bias ? &b : nullptr, md.act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          for (int threads : {1, 2}) {
            const std::string wt = std::string(what) + " threads=" + std::to_string(threads);
            compare(wt.c_str(), run(fast, make, threads, wt.c_str()), want, mag, kFloatTol);
          }
          if (half)
            check_half_scales(
                portable, fast, w,
                [&](Args& a, const QWeight& v) { add_linear_q_packed_args(a, v, x, m, bias ? &b : nullptr, md.act_mode); },
                what);
        }
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (int act_mode : {1, 2})
        for (int64_t m : {1, 2, 5}) {
          const int64_t k = 128, g = act_mode == 2 ? 32 : 64, n = 32;
          const QWeight w = pack_linear(make_qweight(bits, sym, n, k, g, true, m == 2));
          std::vector<float> x(m * k);
          for (int64_t i = 0; i < m * k; ++i)
            x[i] = i % 32 == 5 ? 127.0f : static_cast<float>(static_cast<int>(g_rng() % 255) - 127);
          char what[128];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q_packed exact %d-bit %s act_mode=%d m=%lld", set, bits,
                        sym ? "sym" : "asym", act_mode, (long long)m);
          auto make = [&](Args& a) { add_linear_q_packed_args(a, w, x, m, nullptr, act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          compare(what, run(fast, make, 2, what), want, {}, 0.0);
        }
}

// pocket::conv2d_packed: channels-last x, weights packed as custom_ops.pack_conv_weight does
// (groups 1: (blocks, kh, kw, c_in, 16); depthwise: (kh, kw, c)), bias, residual and bounds;
// the magnitude bound is the unclamped portable kernel on absolute values.
std::vector<float> pack_conv_f32(const std::vector<float>& w, const ConvCase& c) {
  if (c.groups > 1) {
    std::vector<float> out(c.c_out * c.k * c.k);
    for (int64_t o = 0; o < c.c_out; ++o)
      for (int64_t t = 0; t < c.k * c.k; ++t) out[t * c.c_out + o] = w[o * c.k * c.k + t];
    return out;
  }
  const int64_t blocks = (c.c_out + 15) / 16, taps = c.k * c.k;
  std::vector<float> out(blocks * taps * c.c_in * 16, 0.0f);
  for (int64_t o = 0; o < c.c_out; ++o)
    for (int64_t i = 0; i < c.c_in; ++i)
      for (int64_t t = 0; t < taps; ++t)
        out[((o / 16 * taps + t) * c.c_in + i) * 16 + o % 16] = w[(o * c.c_in + i) * taps + t];
  return out;
}

void test_conv2d_packed(KernelFn portable, KernelFn fast, const char* set) {
  const std::vector<ConvCase> cases = {
      {1, 3, 21, 9, 7, 3, 2, 1, 1},   {2, 17, 40, 5, 6, 1, 1, 0, 1},  {1, 5, 16, 13, 13, 5, 3, 2, 1, 2},
      {1, 8, 33, 11, 9, 1, 2, 0, 1},  {1, 3, 2, 3, 5, 3, 1, 3, 1},    {1, 3, 16, 23, 19, 7, 2, 3, 1},
      {2, 6, 6, 7, 7, 3, 1, 1, 6},    {1, 19, 19, 12, 13, 3, 1, 1, 19}, {1, 72, 72, 9, 10, 3, 2, 1, 72},
      {1, 5, 5, 9, 9, 5, 1, 2, 5, 2}, {1, 40, 40, 3, 17, 3, 1, 4, 40},
  };
  const double bounds[4][2] = {{-INFINITY, INFINITY}, {0.0, INFINITY}, {0.0, 6.0}, {-0.5, 0.25}};
  int i = 0;
  for (const ConvCase& c : cases) {
    const int64_t span = c.dil * (c.k - 1) + 1;
    const int64_t oh = (c.h + 2 * c.pad - span) / c.stride + 1, ow = (c.w + 2 * c.pad - span) / c.stride + 1;
    const int64_t out_n = c.batch * oh * ow * c.c_out;
    auto x = random_floats(c.batch * c.h * c.w * c.c_in, 3.0f), b = random_floats(c.c_out);
    auto w = pack_conv_f32(random_floats(c.c_out * (c.c_in / c.groups) * c.k * c.k), c);
    auto r = random_floats(out_n);
    const double* bound = bounds[i % 4];
    const bool bias = i % 3 != 0, residual = i % 2 == 1;
    ++i;
    char what[160];
    std::snprintf(what, sizeof what, "[%s] pocket::conv2d_packed x[%lld,%lld,%lld,%lld] k%lld s%lld p%lld d%lld g%lld",
                  set, (long long)c.batch, (long long)c.h, (long long)c.w, (long long)c.c_in, (long long)c.k,
                  (long long)c.stride, (long long)c.pad, (long long)c.dil, (long long)c.groups);
    auto args = [&](Args& a, bool absolute, bool clamp) {
      a.ptrs = {a.floats({c.batch, c.h, c.w, c.c_in}, absolute ? abs_of(x) : x),
                c.groups > 1 ? a.floats({c.k, c.k, c.c_out}, absolute ? abs_of(w) : w)
                             : a.floats({(c.c_out + 15) / 16, c.k, c.k, c.c_in, 16}, absolute ? abs_of(w) : w),
                bias ? a.floats({c.c_out}, absolute ? abs_of(b) : b) : a.none(),
                residual ? a.floats({c.batch, oh, ow, c.c_out}, absolute ? abs_of(r) : r) : a.none(),
                a.integer(c.c_out), a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}),
                a.integer(c.groups), clamp && !std::isinf(bound[0]) ? a.real(bound[0]) : a.none(),
                clamp && !std::isinf(bound[1]) ? a.real(bound[1]) : a.none(), a.output(out_n)};
    };
    const std::vector<float> want = run(portable, [&](Args& a) { args(a, false, true); }, 1, what);
    const std::vector<float> mag = run(portable, [&](Args& a) { args(a, true, false); }, 1, what);
    for (int threads : {1, 2}) {
      const std::string wt = std::string(what) + " threads=" + std::to_string(threads);
      compare(wt.c_str(), run(fast, [&](Args& a) { args(a, false, true); }, threads, wt.c_str()), want, mag, kFloatTol);
    }
  }
}

// pocket::max_pool2d_channels_last: a maximum picks one of its inputs, so the results must be
// identical (NaN and the sign of zero: tests/kernels/test_conv_packed.py).
void test_max_pool_channels_last(KernelFn portable, KernelFn fast, const char* set) {
  struct PoolCase {
    int64_t batch, h, w, c, k, stride, pad, dil;
    bool ceil;
  };
  const std::vector<PoolCase> cases = {
      {1, 32, 32, 16, 3, 2, 1, 1, false}, {2, 9, 7, 5, 2, 2, 1, 1, false}, {1, 10, 11, 37, 3, 3, 1, 1, true},
      {1, 5, 6, 72, 5, 1, 2, 1, false},  {1, 12, 9, 21, 3, 1, 0, 2, false}, {1, 7, 7, 1, 3, 2, 1, 1, true},
      {1, 20, 3, 64, 17, 1, 8, 1, false},  // taller than the optimized row's 16 kernel rows
  };
  for (const PoolCase& c : cases) {
    int64_t out[2];
    for (int d = 0; d < 2; ++d) {
      const int64_t in = d == 0 ? c.h : c.w, span = c.dil * (c.k - 1) + 1, room = in + 2 * c.pad - span;
      out[d] = (c.ceil ? (room + c.stride - 1) / c.stride : room / c.stride) + 1;
      if (c.ceil && (out[d] - 1) * c.stride >= in + c.pad) --out[d];
    }
    const auto x = random_floats(c.batch * c.h * c.w * c.c, 3.0f);
    char what[160];
    std::snprintf(what, sizeof what,
                  "[%s] pocket::max_pool2d_channels_last x[%lld,%lld,%lld,%lld] k%lld s%lld p%lld d%lld%s", set,
                  (long long)c.batch, (long long)c.h, (long long)c.w, (long long)c.c, (long long)c.k,
                  (long long)c.stride, (long long)c.pad, (long long)c.dil, c.ceil ? " ceil" : "");
    check_case(what, portable, fast, [&](Args& a, bool) {
      a.ptrs = {a.floats({c.batch, c.h, c.w, c.c}, x), a.ints({c.k, c.k}), a.ints({c.stride, c.stride}),
                a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}), a.boolean(c.ceil),
                a.output(c.batch * out[0] * out[1] * c.c)};
    }, 0.0, false);
  }
}

// ---- pocket::conv2d_q8, conv2d_q8_packed and conv2d_q8_channels_last: exact integer sums,
// the same scaling as the portable kernel: identical results.

struct ConvQ8Case {
  int64_t batch, c_in, c_out, h, w, kh, kw, stride, pad, dil, groups, zero_point;
};

// (c_out, cin_g, kh, kw) int8 -> the packed layout of conv2d_q8_packed (see parts.h).
std::vector<int8_t> pack_conv(const std::vector<int8_t>& w, const ConvQ8Case& c) {
  const int64_t cin_g = c.c_in / c.groups, cout_g = c.c_out / c.groups, taps = c.kh * c.kw;
  const int64_t blocks = (cout_g + 15) / 16, quads = (cin_g + 3) / 4;
  std::vector<int8_t> p(c.groups * blocks * taps * quads * 64, 0);
  for (int64_t g = 0; g < c.groups; ++g)
    for (int64_t oc = 0; oc < cout_g; ++oc)
      for (int64_t ic = 0; ic < cin_g; ++ic)
        for (int64_t t = 0; t < taps; ++t)
          p[(((g * blocks + oc / 16) * taps + t) * quads + ic / 4) * 64 + oc % 16 * 4 + ic % 4] =
              w[((g * cout_g + oc) * cin_g + ic) * taps + t];
  return p;
}

void test_conv_q8(const char* op, KernelFn portable, KernelFn fast, const char* set) {
  const bool cl = std::strcmp(op, "pocket::conv2d_q8_channels_last") == 0;  // NHWC x, y and residual
  const bool packed = cl || std::strcmp(op, "pocket::conv2d_q8_packed") == 0;
  // Channels per group off every step and tile, positions off the tiles, depthwise 3x3
  // (stride 1 and 2: the fp32 depthwise microkernel on exact sums) and other small groups
  // (portable), extreme zero points, padding wider than the kernel.
  const std::vector<ConvQ8Case> cases = {
      {1, 3, 16, 23, 29, 7, 7, 2, 3, 1, 1, 0},  {2, 5, 17, 9, 11, 3, 3, 1, 1, 1, 1, -128},
      {1, 8, 33, 13, 10, 3, 3, 2, 1, 1, 1, 127}, {1, 7, 40, 6, 9, 1, 1, 1, 0, 1, 1, 37},
      {1, 16, 24, 11, 12, 3, 2, 1, 0, 2, 1, -5}, {2, 12, 8, 7, 9, 3, 3, 1, 1, 1, 2, 3},
      {1, 32, 64, 10, 10, 3, 3, 2, 1, 1, 4, -20}, {1, 256, 8, 5, 6, 3, 3, 1, 1, 1, 1, 11},
      {1, 4, 4, 3, 5, 3, 3, 1, 3, 1, 1, 0},      {1, 6, 6, 9, 9, 3, 3, 1, 1, 1, 6, 2},
      {2, 8, 8, 17, 13, 3, 3, 2, 1, 1, 8, -7},   {1, 5, 5, 2, 3, 3, 3, 1, 1, 1, 5, 0},
      {1, 4, 8, 9, 9, 3, 3, 2, 1, 1, 4, -1},     {1, 6, 6, 9, 9, 5, 5, 1, 2, 1, 6, 9},
      {1, 261, 20, 4, 5, 3, 3, 1, 1, 1, 1, 5},   // channels-last pixels quantized in runs
      {1, 37, 37, 11, 10, 3, 3, 1, 1, 2, 37, -9}, {2, 20, 20, 8, 9, 3, 5, 2, 2, 1, 20, 100},  // depthwise
  };
  const double clamps[3][2] = {{-INFINITY, INFINITY}, {0.0, INFINITY}, {0.0, 6.0}};
  int n_case = 0;
  for (const ConvQ8Case& c : cases) {
    const int64_t oh = (c.h + 2 * c.pad - c.dil * (c.kh - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dil * (c.kw - 1) - 1) / c.stride + 1;
    const int64_t cin_g = c.c_in / c.groups, cout_g = c.c_out / c.groups;
    auto x = random_floats(c.batch * c.c_in * c.h * c.w, 3.0f);
    std::vector<int8_t> w(c.c_out * cin_g * c.kh * c.kw);
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(g_rng() % 256) - 128);
    std::vector<float> scales(c.c_out), b = random_floats(c.c_out);
    for (float& v : scales) v = uniform(0.001f, 0.02f);
    const bool bias = n_case % 2 == 0;
    const bool residual = cl && n_case % 4 < 2;
    const auto res = random_floats(c.batch * c.c_out * oh * ow, 2.0f);
    const double* clamp = clamps[n_case++ % 3];
    const bool oihw = !packed || cout_g < 4;  // as the exporter stores depthwise weights
    const std::vector<int8_t> wp = oihw ? w : pack_conv(w, c);
    char what[220];
    std::snprintf(what, sizeof what, "[%s] %s x[%lld,%lld,%lld,%lld] c_out %lld k%lldx%lld s%lld p%lld d%lld g%lld zp%lld%s",
                  set, op, (long long)c.batch, (long long)c.c_in, (long long)c.h, (long long)c.w, (long long)c.c_out,
                  (long long)c.kh, (long long)c.kw, (long long)c.stride, (long long)c.pad, (long long)c.dil,
                  (long long)c.groups, (long long)c.zero_point, residual ? " residual" : "");
    auto make = [&](Args& a) {
      Value* weight = oihw ? a.tensor(ScalarType::Int8, {c.c_out, cin_g, c.kh, c.kw}, wp)
                           : a.tensor(ScalarType::Int8, {c.groups, (cout_g + 15) / 16, c.kh * c.kw, (cin_g + 3) / 4, 16, 4}, wp);
      a.ptrs = {cl ? a.floats({c.batch, c.h, c.w, c.c_in}, x) : a.floats({c.batch, c.c_in, c.h, c.w}, x), weight,
                a.floats({c.c_out}, scales), bias ? a.floats({c.c_out}, b) : a.none()};
      if (cl) a.ptrs.push_back(residual ? a.floats({c.batch, oh, ow, c.c_out}, res) : a.none());
      a.ptrs.push_back(a.real(0.021));
      a.ptrs.push_back(a.integer(c.zero_point));
      if (packed) a.ptrs.push_back(a.ints({c.kh, c.kw}));
      for (Value* v : {a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}), a.integer(c.groups)})
        a.ptrs.push_back(v);
      if (packed) {
        a.ptrs.push_back(std::isinf(clamp[0]) ? a.none() : a.real(clamp[0]));
        a.ptrs.push_back(std::isinf(clamp[1]) ? a.none() : a.real(clamp[1]));
      }
      a.ptrs.push_back(a.output(c.batch * c.c_out * oh * ow));
    };
    const std::vector<float> want = run(portable, make, 1, what);
    for (int threads : {1, 2}) {
      const std::string wt = std::string(what) + " threads=" + std::to_string(threads);
      compare(wt.c_str(), run(fast, make, threads, wt.c_str()), want, {}, 0.0);
    }
  }
}

struct OpTest {
  const char* name;
  std::function<void(KernelFn, KernelFn, const char*)> run;
};

const std::vector<OpTest>& op_tests() {
  static const std::vector<OpTest> tests = {
      {"aten::linear", test_linear},
      {"aten::mm", [](KernelFn p, KernelFn f, const char* s) { test_matmul("aten::mm", p, f, s); }},
      {"aten::bmm", [](KernelFn p, KernelFn f, const char* s) { test_matmul("aten::bmm", p, f, s); }},
      {"aten::addmm", [](KernelFn p, KernelFn f, const char* s) { test_matmul("aten::addmm", p, f, s); }},
      {"aten::convolution", test_convolution},
      {"pocket::convolution_clamp", test_convolution_clamp},
      {"pocket::conv2d_packed", test_conv2d_packed},
      {"pocket::max_pool2d_channels_last", test_max_pool_channels_last},
      {"pocket::conv2d_q8", [](KernelFn p, KernelFn f, const char* s) { test_conv_q8("pocket::conv2d_q8", p, f, s); }},
      {"pocket::conv2d_q8_packed",
       [](KernelFn p, KernelFn f, const char* s) { test_conv_q8("pocket::conv2d_q8_packed", p, f, s); }},
      {"pocket::conv2d_q8_channels_last",
       [](KernelFn p, KernelFn f, const char* s) { test_conv_q8("pocket::conv2d_q8_channels_last", p, f, s); }},
      {"pocket::linear_q", test_linear_q},
      {"pocket::linear_q_packed", test_linear_q_packed},
      {"pocket::sdpa", test_sdpa},
      {"pocket::rms_norm", test_rms_norm},
      {"pocket::rope", test_rope},
      {"pocket::swiglu", test_swiglu},
      {"aten::native_layer_norm", test_layer_norm},
      {"aten::_softmax", test_softmax},
      {"aten::gelu", test_gelu},
  };
  return tests;
}

// The feature sets to test: each level this CPU supports.
std::vector<detail::CpuFeatures> levels() {
  const detail::CpuFeatures& have = detail::cpu_features();
  std::vector<detail::CpuFeatures> out;
  const std::vector<std::vector<const char*>> candidates = {
      {"avx2_fma"}, {"avx2_fma", "avx512"}, {"avx2_fma", "avx512", "avx512_vnni"}, {"neon"}, {"neon", "dotprod"},
      {"neon", "dotprod", "i8mm"}};
  std::vector<std::string> seen;
  for (const auto& names : candidates) {
    detail::CpuFeatures f;
    bool ok = true;
    for (const char* n : names)
      for (const detail::FeatureInfo& info : detail::feature_list())
        if (std::strcmp(info.name, n) == 0) {
          ok = ok && have.*info.flag;
          f.*info.flag = true;
        }
    const std::string set = detail::kernel_set_name(f);
    if (!ok || set == "portable") continue;
    bool dup = false;
    for (const std::string& s : seen) dup = dup || s == set;
    if (dup) continue;
    seen.push_back(set);
    out.push_back(f);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* expect = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--expect-set") == 0) expect = argv[i + 1];
  const char* best = detail::kernel_set_name(detail::cpu_features());
  std::printf("CPU features:");
  for (const detail::FeatureInfo& info : detail::feature_list())
    if (detail::cpu_features().*info.flag) std::printf(" %s", info.name);
  std::printf("\nbest kernel set: %s\n", best);
  if (expect != nullptr && std::strcmp(expect, best) != 0) FAIL("best kernel set is %s, expected %s", best, expect);
  for (const detail::CpuFeatures& f : levels()) {
    const char* set = detail::kernel_set_name(f);
    for (const detail::OptimizedKernel& k : detail::optimized_kernels(f)) {
      const OpTest* test = nullptr;
      for (const OpTest& t : op_tests())
        if (std::strcmp(t.name, k.name) == 0) test = &t;
      if (test == nullptr) {
        FAIL("[%s] %s is optimized but has no differential test here", set, k.name);
        continue;
      }
      const int before = g_checks;
      test->run(detail::kernel_for(k.name, detail::CpuFeatures()), k.fn, set);
      std::printf("[%s] %-20s %d cases\n", set, k.name, g_checks - before);
    }
  }
  std::printf("%d cases, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
