#include "cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#endif
#if defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace pocket {
namespace detail {

static CpuFeatures detect() {
  CpuFeatures f;
  const char* env = getenv("POCKET_KERNELS");
  if (env != nullptr && strcmp(env, "portable") == 0) return f;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // F16C from CPUID leaf 1 (ECX bit 29): clang before 15 has no "f16c" for __builtin_cpu_supports.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(1, eax, ebx, ecx, edx);
  const bool f16c = (ecx & (1u << 29)) != 0;
  f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  f.avx512 = f.avx2_fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni");
#elif defined(__aarch64__)
  f.neon = true;
#if defined(__linux__)
  f.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  f.i8mm = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
#elif defined(__APPLE__)
  f.dotprod = true;  // every arm64 Apple CPU
  int i8mm = 0;      // A15 / M2 and later; the key exists from macOS 12, iOS 15
  size_t size = sizeof i8mm;
  f.i8mm = sysctlbyname("hw.optional.arm.FEAT_I8MM", &i8mm, &size, nullptr, 0) == 0 && i8mm != 0;
#endif
#endif
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace detail
}  // namespace pocket
