// Differential test of the optimized kernels against the portable ones (as ggml's
// test-backend-ops does), driven by the optimized kernel table: for every kernel set this
// CPU can run (e.g. avx2, avxvnni, avx512, avx512vnni; neon, neondot) and every op the set
// optimizes, random inputs (odd sizes, tails shorter than a vector, M in {1, 2, 7, 33})
// go through both kernels, on 1 and 2 threads, and the results must agree:
//   - float results within 1e-5 of the sum of the absolute terms (computed by running the
//     portable kernel on absolute values where the op allows, else a bound);
//   - linear_q with int8 activations on inputs built so that every scale is 1: integer
//     results, which must be equal bit for bit (the integer paths are exact);
//   - conv2d_q8, conv2d_q8_packed and conv2d_q8_channels_last: identical results (exact sums,
//     the same scaling).
//   - conv2d_packed (channels-last fp32, packed weights, residual, bounds): within 1e-5 of the
//     unclamped portable result on absolute values.
//   - conv2d_winograd (F(2x2, 3x3), residual, bounds): within 1e-5 of the magnitude of its sums.
//   - max_pool2d_channels_last, lookup_int8: identical results.
//   - linear_q_packed: float32 scaling (the portable kernel: double), within 1e-5 of Σ|x|·max|w|;
//     on unit scales integers, bit-exact.
//   - linear_q and linear_q_packed with float16 scales and mins (GGUF's d and m): as above, and
//     identical to the same weight with float32 scales of the same values (both kernels).
// An op in the table without a test here is a failure. Runs under qemu-aarch64 in the
// cross build, so inputs stay small. The cases of each kernel family are in
// kernel_diff_<family>.cpp (gemm, llm, nn, linear_q, conv), the harness in kernel_diff.h.
//
//   kernel_diff_test [--expect-set NAME]   (fail unless the best set for this CPU is NAME)
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernel_diff.h"

using namespace kdiff;

namespace {

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
      {"pocket::conv2d_packed.act", test_conv2d_packed_act},
      {"pocket::conv2d_winograd", test_conv2d_winograd},
      {"pocket::conv2d_winograd.act", test_conv2d_winograd_act},
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
      {"aten::hardswish",
       [](KernelFn p, KernelFn f, const char* s) { test_hard_activation("aten::hardswish", p, f, s); }},
      {"aten::hardsigmoid",
       [](KernelFn p, KernelFn f, const char* s) { test_hard_activation("aten::hardsigmoid", p, f, s); }},
      {"aten::sigmoid", [](KernelFn p, KernelFn f, const char* s) { test_logistic("aten::sigmoid", p, f, s); }},
      {"aten::silu", [](KernelFn p, KernelFn f, const char* s) { test_logistic("aten::silu", p, f, s); }},
      {"aten::permute", test_permute},
      {"pocket::lookup_int8", test_lookup_int8},
  };
  return tests;
}

// The feature sets to test: each level this CPU supports.
std::vector<detail::CpuFeatures> levels() {
  const detail::CpuFeatures& have = detail::cpu_features();
  std::vector<detail::CpuFeatures> out;
  const std::vector<std::vector<const char*>> candidates = {
      {"avx2_fma"}, {"avx2_fma", "avx_vnni"}, {"avx2_fma", "avx512"}, {"avx2_fma", "avx512", "avx512_vnni"}, {"neon"}, {"neon", "dotprod"},
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
