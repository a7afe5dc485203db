#include "tokenizer/hf_normalizer.h"

#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

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

std::string strip(const std::string& text, bool left, bool right) {
  size_t begin = 0, end = text.size(), len = 0;
  while (left && begin < end && is_whitespace(utf8_decode(text.data() + begin, end - begin, &len))) begin += len;
  while (right && end > begin) {
    size_t s = end - 1;
    while (s > begin && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
    uint32_t cp = utf8_decode(text.data() + s, end - s, &len);
    if (s + len != end || !is_whitespace(cp)) break;
    end = s;
  }
  return text.substr(begin, end - begin);
}

}  // namespace

bool parse_hf_pattern(JsonRef json, const char* where, bool* is_regex, std::string* pattern, std::string* error) {
  if (json.get("String").is_string()) {
    *is_regex = false;
    *pattern = std::string(json.get("String").str());
    return true;
  }
  if (json.get("Regex").is_string()) {
    *is_regex = true;
    *pattern = std::string(json.get("Regex").str());
    return true;
  }
  *error = std::string(where) + ".pattern must be {\"String\": ...} or {\"Regex\": ...}";
  return false;
}

bool HfNormalizer::parse(JsonRef json, std::string* error) {
  steps_.clear();
  if (json.missing() || json.is_null()) return true;
  return parse_step(json, error);
}

bool HfNormalizer::parse_step(JsonRef json, std::string* error) {
  std::string_view type = json.get("type").str();
  Step step;
  if (type == "Sequence") {
    JsonRef list = json.get("normalizers");
    if (!list.is_array()) return *error = "normalizer Sequence has no \"normalizers\" list", false;
    for (size_t i = 0; i < list.size(); ++i)
      if (!parse_step(list.at(i), error)) return false;
    return true;
  } else if (type == "Prepend") {
    step.kind = Step::Prepend;
    step.text = std::string(json.get("prepend").str());
  } else if (type == "Replace") {
    bool is_regex = false;
    if (!parse_hf_pattern(json.get("pattern"), "normalizer Replace", &is_regex, &step.text, error)) return false;
    step.kind = is_regex ? Step::ReplaceRegex : Step::Replace;
    step.content = std::string(json.get("content").str());
    if (is_regex && !step.regex.compile(step.text, error)) {
      *error = "normalizer Replace: pattern '" + pattern_for_message(step.text) + "' is not supported: " + *error;
      return false;
    }
  } else if (type == "NFC") {
    step.kind = Step::Nfc;
  } else if (type == "Strip") {
    step.kind = Step::Strip;
    step.left = json.get("strip_left").boolean();
    step.right = json.get("strip_right").boolean();
  } else {
    *error = "normalizer '" + std::string(type.empty() ? "(no type)" : type) +
             "' is not supported (supported: Sequence, Prepend, Replace, NFC, Strip)";
    return false;
  }
  steps_.push_back(std::move(step));
  return true;
}

std::string HfNormalizer::apply(const std::string& text) const {
  std::string s = text;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::Prepend:
        if (!s.empty()) s = step.text + s;
        break;
      case Step::Replace: s = replace_all(s, step.text, step.content); break;
      case Step::ReplaceRegex: {
        std::vector<std::pair<size_t, size_t>> hits;
        step.regex.find_all(s, &hits);
        std::string out;
        size_t pos = 0;
        for (const auto& h : hits) out.append(s, pos, h.first - pos).append(step.content), pos = h.second;
        s = out.append(s, pos, std::string::npos);
        break;
      }
      case Step::Nfc: s = nfc(s); break;
      case Step::Strip: s = strip(s, step.left, step.right); break;
    }
  }
  return s;
}

}  // namespace detail
}  // namespace pocket
