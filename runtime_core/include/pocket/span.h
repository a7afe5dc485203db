// A pointer and a length; the core's only container.
#pragma once

#include <cstddef>

namespace pocket {

template <typename T>
struct Span {
  T* data = nullptr;
  size_t size = 0;

  Span() = default;
  Span(T* d, size_t n) : data(d), size(n) {}
  T& operator[](size_t i) const { return data[i]; }
  T* begin() const { return data; }
  T* end() const { return data + size; }
  bool empty() const { return size == 0; }
};

}  // namespace pocket
