// kernel_diff_test: the LLM ops (sdpa, rms_norm, rope, swiglu) (the harness: kernel_diff.h).
#include "kernel_diff.h"

namespace kdiff {

void test_sdpa(KernelFn portable, KernelFn fast, const char* set) {
  struct Case {
    int64_t hq, hkv, t, start, d;
  };
  // Query heads per kv head 1-8: the optimized driver runs up to 4 of them together (8: two
  // groups of 4, 5: 4 and 1; a slice boundary may split a group too).
  for (const Case& c : std::vector<Case>{{1, 1, 1, 0, 8}, {4, 2, 1, 20, 64}, {3, 1, 5, 7, 13}, {2, 2, 3, 30, 40},
                                         {6, 3, 1, 50, 37}, {12, 3, 1, 40, 64}, {8, 1, 2, 9, 24}, {5, 1, 3, 4, 19},
                                         {10, 2, 1, 70, 33}}) {
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
    // Float16 caches (an fp16 KV cache): the optimized rows widen K and V as they load them
    // (the ISA's conversion), the portable kernel with half_to_float; both exact.
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

}  // namespace kdiff
