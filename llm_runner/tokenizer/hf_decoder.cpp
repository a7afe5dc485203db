#include "tokenizer/hf_decoder.h"

#include "tokenizer/byte_level.h"

namespace pocket {
namespace detail {
namespace {

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string::npos; pos = hit + from.size())
    out.append(text, pos, hit - pos).append(to);
  return out.append(text, pos, std::string::npos);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0x0A>" -> "\n"; false for anything else.
bool byte_token(const std::string& token, std::string* out) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return false;
  int hi = hex_value(token[3]), lo = hex_value(token[4]);
  if (hi < 0 || lo < 0) return false;
  *out = std::string(1, static_cast<char>(hi * 16 + lo));
  return true;
}

// Removes up to `count` copies of `what` from the front (or back) of *s.
void strip_copies(std::string* s, const std::string& what, size_t count, bool front) {
  if (what.empty()) return;
  for (size_t k = 0; k < count && s->size() >= what.size(); ++k) {
    size_t at = front ? 0 : s->size() - what.size();
    if (s->compare(at, what.size(), what) != 0) break;
    s->erase(at, what.size());
  }
}

}  // namespace

bool HfDecoder::parse(JsonRef json, std::string* error) {
  per_token_.clear();
  none_ = json.missing() || json.is_null();
  return none_ || parse_step(json, error);
}

bool HfDecoder::parse_step(JsonRef json, std::string* error) {
  std::string_view type = json.get("type").str();
  Step step;
  if (type == "Sequence") {
    JsonRef list = json.get("decoders");
    if (!list.is_array()) return *error = "decoder Sequence has no \"decoders\" list", false;
    for (size_t i = 0; i < list.size(); ++i)
      if (!parse_step(list.at(i), error)) return false;
    return true;
  }
  if (type == "Fuse") {
    fused_ = true;
    return true;
  }
  if (type == "ByteLevel") {
    step.kind = Step::ByteLevel;
  } else if (type == "ByteFallback") {
    step.kind = Step::ByteFallback;
  } else if (type == "Replace") {
    step.kind = Step::Replace;
    if (!json.get("pattern").get("String").is_string())
      return *error = "decoder Replace: only {\"String\": ...} patterns are supported", false;
    step.from = std::string(json.get("pattern").get("String").str());
    step.to = std::string(json.get("content").str());
  } else if (type == "Strip") {
    step.kind = Step::Strip;
    step.content = std::string(json.get("content").str());
    step.start = static_cast<size_t>(json.get("start").integer());
    step.stop = static_cast<size_t>(json.get("stop").integer());
    if (fused_) {  // after Fuse there is one token: the whole output
      strip_content_ = step.content, strip_start_ = step.start, strip_stop_ = step.stop;
      return true;
    }
  } else if (type == "Metaspace") {
    step.kind = Step::Metaspace;
    step.from = json.get("replacement").is_string() ? std::string(json.get("replacement").str()) : "\xE2\x96\x81";
    std::string_view scheme = json.get("prepend_scheme").str();
    bool prepends = scheme.empty() ? json.get("add_prefix_space").boolean() : scheme != "never";
    if (prepends) metaspace_first_ = step.from;
  } else {
    *error = "decoder '" + std::string(type.empty() ? "(no type)" : type) +
             "' is not supported (supported: Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace)";
    return false;
  }
  per_token_.push_back(std::move(step));
  return true;
}

std::string HfDecoder::piece(const std::string& token) const {
  std::string s = token, bytes;
  for (const Step& step : per_token_) {
    switch (step.kind) {
      case Step::ByteLevel:
        if (byte_level_decode(s, &bytes)) s = bytes;  // else its text as it is (as HF does)
        break;
      case Step::Replace: s = replace_all(s, step.from, step.to); break;
      case Step::ByteFallback:
        if (byte_token(s, &bytes)) s = bytes;
        break;
      case Step::Strip:
        strip_copies(&s, step.content, step.start, true);
        strip_copies(&s, step.content, step.stop, false);
        break;
      case Step::Metaspace: s = replace_all(s, step.from, " "); break;
    }
  }
  return s;
}

void HfDecoder::decode(const std::vector<const std::string*>& texts, const std::vector<const std::string*>& pieces,
                       std::string* out) const {
  std::string s;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (none_) {
      if (i > 0) s += ' ';
      s += *texts[i];
      continue;
    }
    const std::string& p = *pieces[i];
    bool drop_space = i == 0 && !metaspace_first_.empty() && !p.empty() && p[0] == ' ' &&
                      texts[0]->compare(0, metaspace_first_.size(), metaspace_first_) == 0;
    s.append(p, drop_space ? 1 : 0, std::string::npos);
  }
  strip_copies(&s, strip_content_, strip_start_, true);
  strip_copies(&s, strip_content_, strip_stop_, false);
  *out += s;
}

}  // namespace detail
}  // namespace pocket
