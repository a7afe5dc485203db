// kernel_diff_test: layer norm, softmax, gelu, hardswish, hardsigmoid, sigmoid, silu and permute
// (the harness: kernel_diff.h).
#include "kernel_diff.h"

namespace kdiff {

// aten::native_layer_norm: all three outputs (y, mean, rstd), weight and bias each optional;
// |difference| <= 1e-5 * (|portable| + 1) (statistics in double in both kernels; y's
// multiply-add of w and b in float in the optimized one).
void test_layer_norm(KernelFn portable, KernelFn fast, const char* set) {
  for (int64_t rows : {1, 3, 33})
    for (int64_t cols : {1, 7, 8, 64, 1000})
      for (int affine = 0; affine < 4; ++affine) {
        auto x = random_floats(rows * cols, 3.0f), w = random_floats(cols), b = random_floats(cols);
        for (float& v : x) v += 1.0f;
        const auto make = [&](Args& a) {
          a.ptrs = {a.floats({rows, cols}, x), a.ints({cols}), affine & 1 ? a.floats({cols}, w) : a.none(),
                    affine & 2 ? a.floats({cols}, b) : a.none(), a.real(1e-5), a.output(rows * cols), a.output(rows),
                    a.output(rows)};
        };
        const std::string name = std::string("[") + set + "] aten::native_layer_norm";
        const auto outputs = [&](KernelFn fn, int threads) { return run(fn, make, threads, name.c_str(), 3); };
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

// An elementwise op (x, out) on vector bodies and tails, x random in [-scale, scale] but for
// `corners` first: |difference| <= rel * |portable| + abs (0, 0: its bits), and a NaN exactly
// where the portable kernel has one (compare() counts NaN as a difference).
void check_elementwise(const char* op, KernelFn portable, KernelFn fast, const char* set,
                       const std::vector<float>& corners, float scale, double rel, double abs) {
  for (int64_t n : {1, 7, 8, 9, 1000, 3 * 65}) {
    auto x = random_floats(n, scale);
    for (size_t i = 0; i < size_t(n) && i < corners.size(); ++i) x[i] = corners[i];
    const auto make = [&](Args& a) { a.ptrs = {a.floats({n}, x), a.output(n)}; };
    char what[96];
    std::snprintf(what, sizeof what, "[%s] %s n=%lld", set, op, (long long)n);
    const std::vector<float> want = run(portable, make, 1, what);
    for (int threads : {1, 2}) {
      const std::vector<float> got = run(fast, make, threads, what);
      ++g_checks;
      for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        const bool nan = std::isnan(want[i]);
        const bool close = got[i] == want[i] || std::fabs(double(got[i]) - want[i]) <= rel * std::fabs(want[i]) + abs;
        if (nan != std::isnan(got[i]) || (!nan && !close)) {
          FAIL("%s threads=%d: output %zu (x = %.9g) is %.9g, portable %.9g", what, threads, i, x[i], got[i], want[i]);
          break;
        }
      }
    }
  }
}

// aten::hardswish and aten::hardsigmoid at the corners of relu6(x + 3) (-3, 3, +-inf, NaN, -0).
// The portable kernel's operations in its order: its bits.
void test_hard_activation(const char* op, KernelFn portable, KernelFn fast, const char* set) {
  const float inf = INFINITY;
  check_elementwise(op, portable, fast, set, {-3.0f, 3.0f, -inf, inf, NAN, -0.0f, -3.0000002f, 2.9999998f}, 4.0f, 0, 0);
}

// aten::sigmoid and aten::silu: both signs far out (where exp(-x) overflows in the portable
// kernel and the optimized exp stops at -87), +-inf, -0 and NaN. Within 2e-6 relative (a few
// ulp of exp and divide) and 1e-30 absolute (a result the portable kernel makes a denormal).
void test_logistic(const char* op, KernelFn portable, KernelFn fast, const char* set) {
  const float inf = INFINITY;
  check_elementwise(op, portable, fast, set, {-inf, inf, NAN, -0.0f, -87.5f, -100.0f, 88.0f, -20.0f, 20.0f, 1e-8f},
                    10.0f, 2e-6, 1e-30);
}

// aten::permute: NCHW -> NHWC of 3 channels (the optimized interleave: vector bodies, pixel
// tails, chunks of 4096 pixels split over the threads, batch items), both channel transposes
// of 8 channels and more (the optimized 8x8 blocks, and the partial blocks at the edges), and
// what stays with the portable kernel (other channel counts, other orders, a strided input).
// Exact.
void test_permute(KernelFn portable, KernelFn fast, const char* set) {
  struct Case {
    std::vector<int64_t> sizes, dims;
    bool strided;
  };
  std::vector<Case> cases;
  for (int64_t n : {1, 2})
    for (int64_t c : {1, 2, 3, 4})
      for (const auto& hw : std::vector<std::vector<int64_t>>{{1, 1}, {3, 5}, {7, 8}, {64, 65}, {100, 90}})
        cases.push_back({{n, c, hw[0], hw[1]}, {0, 2, 3, 1}, false});
  for (int64_t c : {8, 16, 19})
    for (const auto& hw : std::vector<std::vector<int64_t>>{{1, 8}, {7, 9}, {16, 24}})
      for (const auto& dims : std::vector<std::vector<int64_t>>{{0, 2, 3, 1}, {0, 3, 1, 2}})
        cases.push_back({{c == 19 ? 2 : 1, c, hw[0], hw[1]}, dims, false});
  cases.push_back({{2, 3, 9, 11}, {0, 3, 1, 2}, false});
  cases.push_back({{1, 3, 9, 11}, {0, 1, 3, 2}, false});
  cases.push_back({{1, 3, 9, 11}, {0, 2, 3, 1}, true});
  for (const Case& c : cases) {
    const int64_t numel = c.sizes[0] * c.sizes[1] * c.sizes[2] * c.sizes[3];
    const std::vector<float> x = random_floats(static_cast<size_t>(numel * (c.strided ? 2 : 1)), 3.0f);
    std::vector<int64_t> strides;
    if (c.strided)  // every other element of the last dim
      strides = {2 * c.sizes[1] * c.sizes[2] * c.sizes[3], 2 * c.sizes[2] * c.sizes[3], 2 * c.sizes[3], 2};
    char what[128];
    std::snprintf(what, sizeof what, "[%s] aten::permute sizes=(%lld,%lld,%lld,%lld) dims=(%lld,%lld,%lld,%lld)%s", set,
                  (long long)c.sizes[0], (long long)c.sizes[1], (long long)c.sizes[2], (long long)c.sizes[3],
                  (long long)c.dims[0], (long long)c.dims[1], (long long)c.dims[2], (long long)c.dims[3],
                  c.strided ? " strided" : "");
    const auto make = [&](Args& a) { a.ptrs = {a.floats(c.sizes, x, strides), a.ints(c.dims), a.output(numel)}; };
    compare_threads(what, fast, make, run(portable, make, 1, what), {}, 0.0);
  }
}

// pocket::lookup_int8: every one of the 256 values (each table entry read), lengths around
// the vector widths (16, 32: the tails), a length split over two threads, the contiguous
// inputs the optimized kernel reads and a strided one (the portable kernel's). Exact.
void test_lookup_int8(KernelFn portable, KernelFn fast, const char* set) {
  std::vector<int8_t> table(256);
  for (int8_t& v : table) v = static_cast<int8_t>(static_cast<int>(g_rng() % 256) - 128);
  for (int64_t n : {1, 15, 16, 17, 31, 32, 33, 256, 1000, 70001}) {
    for (bool strided : {false, true}) {
      if (strided && n > 1000) continue;
      std::vector<int8_t> x(static_cast<size_t>(strided ? 2 * n : n));
      for (size_t i = 0; i < x.size(); ++i)  // the first 256 every value once, then random
        x[i] = static_cast<int8_t>(i < 256 ? static_cast<int>(i) - 128 : static_cast<int>(g_rng() % 256) - 128);
      char what[96];
      std::snprintf(what, sizeof what, "[%s] pocket::lookup_int8 n=%lld%s", set, (long long)n, strided ? " strided" : "");
      const auto make = [&](Args& a) {
        a.ptrs = {a.tensor(ScalarType::Int8, {n}, x, strided ? std::vector<int64_t>{2} : std::vector<int64_t>{}),
                  a.tensor(ScalarType::Int8, {256}, table), a.output_q8(n)};
      };
      compare_threads(what, fast, make, run(portable, make, 1, what), {}, 0.0);
    }
  }
}

}  // namespace kdiff
