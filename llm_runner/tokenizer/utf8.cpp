#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {

uint32_t utf8_decode(const char* s, size_t n, size_t* len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  unsigned char b0 = p[0];
  *len = 1;
  if (b0 < 0x80) return b0;
  size_t need;
  uint32_t cp, min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3, cp = b0 & 0x07, min = 0x10000;
  } else {
    return kBadByte | b0;
  }
  if (n < need + 1) return kBadByte | b0;
  for (size_t i = 1; i <= need; ++i) {
    if ((p[i] & 0xC0) != 0x80) return kBadByte | b0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return kBadByte | b0;
  *len = need + 1;
  return cp;
}

void utf8_append(uint32_t cp, std::string* out) {
  if (is_bad_byte(cp)) {
    out->push_back(static_cast<char>(cp & 0xFF));
  } else if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace detail
}  // namespace pocket
