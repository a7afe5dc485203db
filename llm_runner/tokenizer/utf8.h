// UTF-8 decoding that never fails: a byte that does not start a valid, shortest-form sequence
// (bad lead byte, truncated or overlong sequence, surrogate, > U+10FFFF) is one "bad byte"
// code point, kBadByte | byte, which is in no Unicode category.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pocket {
namespace detail {

constexpr uint32_t kBadByte = 0x110000;  // kBadByte | b stands for the invalid byte b

inline bool is_bad_byte(uint32_t cp) { return cp >= kBadByte; }

// Decodes the code point at s[0] (n > 0 bytes available); sets *len to the bytes consumed (>= 1).
uint32_t utf8_decode(const char* s, size_t n, size_t* len);

// Appends the UTF-8 encoding of cp (a bad-byte code point appends its raw byte).
void utf8_append(uint32_t cp, std::string* out);

// The byte length of the first code point of s (at least 1, at most n).
inline size_t utf8_length(const char* s, size_t n) {
  size_t len = 0;
  utf8_decode(s, n, &len);
  return len;
}

}  // namespace detail
}  // namespace pocket
