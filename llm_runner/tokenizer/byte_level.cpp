#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {
namespace {

bool stands_for_itself(uint32_t b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  uint32_t to_unicode[256];
  int16_t to_byte[0x144];  // every stand-in is below U+0144
  Tables() {
    for (int16_t& b : to_byte) b = -1;
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      to_unicode[b] = stands_for_itself(b) ? b : 0x100 + extra++;
      to_byte[to_unicode[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

uint32_t byte_to_unicode(uint8_t byte) { return tables().to_unicode[byte]; }

bool byte_level_decode(std::string_view text, std::string* out) {
  const Tables& t = tables();
  out->clear();
  for (size_t i = 0; i < text.size();) {
    size_t len = 0;
    uint32_t cp = utf8_decode(text.data() + i, text.size() - i, &len);
    if (cp >= 0x144 || t.to_byte[cp] < 0) return false;
    out->push_back(static_cast<char>(t.to_byte[cp]));
    i += len;
  }
  return true;
}

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) utf8_append(byte_to_unicode(b), &out);
  return out;
}

}  // namespace detail
}  // namespace pocket
