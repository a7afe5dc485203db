// The p-norm distance of two vectors, shared by cdist and pdist: p = 0 counts the differing
// entries, p = inf takes the largest difference. Accumulates in double.
#pragma once

#include <cmath>
#include <cstdint>

namespace pocket {
namespace detail {

template <typename T>
T p_distance(const T* a, const T* b, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(static_cast<double>(a[k]) - static_cast<double>(b[k]));
    if (p == 0) acc += d != 0 ? 1 : 0;
    else if (std::isinf(p)) acc = d > acc || std::isnan(d) ? d : acc;
    else if (p == 1) acc += d;
    else if (p == 2) acc += d * d;
    else acc += std::pow(d, p);
  }
  if (p == 0 || p == 1 || std::isinf(p)) return static_cast<T>(acc);
  return static_cast<T>(p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p));
}

}  // namespace detail
}  // namespace pocket
