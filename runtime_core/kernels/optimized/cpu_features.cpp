#include "cpu_features.h"

#include <cstdio>
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

// POCKET_KERNELS caps the features at a kernel set, to run and test a smaller CPU's code on
// a bigger one: portable, avx2, avxvnni (AVX2 + AVX-VNNI, no AVX-512), avx512 (without VNNI),
// neon, neondot. Another value (a typo) caps nothing and says so once on stderr; an empty one
// caps nothing.
static void apply_cap(const char* cap, CpuFeatures* f) {
  static const char* const kSets[] = {"portable", "avx2", "avxvnni", "avx512", "neon", "neondot"};
  bool known = cap[0] == '\0';
  for (const char* set : kSets) known = known || strcmp(cap, set) == 0;
  if (!known) {
    char sets[96] = "";  // kSets joined by ", ": one line, one write
    for (const char* set : kSets) {
      if (sets[0] != '\0') strncat(sets, ", ", sizeof sets - strlen(sets) - 1);
      strncat(sets, set, sizeof sets - strlen(sets) - 1);
    }
    fprintf(stderr, "pocket: POCKET_KERNELS=%s is not a kernel set (%s); ignored\n", cap, sets);
    return;
  }
  if (strcmp(cap, "portable") == 0) *f = CpuFeatures();
  const bool avx2 = strcmp(cap, "avx2") == 0, avxvnni = strcmp(cap, "avxvnni") == 0;
  if (avx2 || avxvnni) f->avx512 = false;
  if (avx2 || avxvnni || strcmp(cap, "avx512") == 0) f->avx512_vnni = false;
  if (avx2 || strcmp(cap, "avx512") == 0) f->avx_vnni = false;
  if (strcmp(cap, "neon") == 0) f->dotprod = false;
  if (strcmp(cap, "neon") == 0 || strcmp(cap, "neondot") == 0) f->i8mm = false;
}

static CpuFeatures detect() {
  CpuFeatures f;
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
  // AVX-VNNI from CPUID leaf 7 sub-leaf 1 (EAX bit 4): not every compiler knows "avxvnni". Its
  // YMM state is the AVX2 check's.
  f.avx_vnni = f.avx2_fma && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 4)) != 0;
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
  const char* cap = getenv("POCKET_KERNELS");
  if (cap != nullptr) apply_cap(cap, &f);
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace detail
}  // namespace pocket
