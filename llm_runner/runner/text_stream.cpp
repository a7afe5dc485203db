#include "text_stream.h"

namespace pocket {

static size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // continuation or invalid byte: passes through alone
}

size_t utf8_complete_prefix(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t n = utf8_length(static_cast<unsigned char>(s[i]));
    if (i + n > s.size()) {
      // Hold back only a sequence that may still complete.
      for (size_t k = i + 1; k < s.size(); ++k)
        if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) return s.size();
      return i;
    }
    i += n;
  }
  return s.size();
}

std::string TextStream::push(const std::string& bytes, bool* stopped) {
  *stopped = false;
  pending_ += bytes;
  for (const std::string& stop : stops_) {
    size_t at = pending_.find(stop);
    if (at != std::string::npos) {
      *stopped = true;
      std::string out = pending_.substr(0, at);
      pending_.clear();
      return out;
    }
  }
  // Keep back the longest tail that is a prefix of some stop string.
  size_t hold = 0;
  for (const std::string& stop : stops_)
    for (size_t n = std::min(stop.size() - 1, pending_.size()); n > hold; --n)
      if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
        hold = n;
        break;
      }
  size_t ready = utf8_complete_prefix(pending_.substr(0, pending_.size() - hold));
  std::string out = pending_.substr(0, ready);
  pending_.erase(0, ready);
  return out;
}

std::string TextStream::finish() {
  size_t ready = utf8_complete_prefix(pending_);
  std::string out = pending_.substr(0, ready);
  if (ready < pending_.size()) out += "\xEF\xBF\xBD";
  pending_.clear();
  return out;
}

}  // namespace pocket
