// kernel_diff_test: linear, matmuls and NCHW convolutions (the harness: kernel_diff.h).
#include "kernel_diff.h"

namespace kdiff {

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
    compare_threads(what, fast, [&](Args& a) { args(a, false, true); }, want, mag, kFloatTol);
  }
}

}  // namespace kdiff
