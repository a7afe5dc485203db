#include "tokenizer/hf_pretokenizer.h"

#include "tokenizer/hf_normalizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {

const char* const kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

namespace {

struct Span {
  size_t begin, end;
  bool is_match;
};

// The spans of [0, n) between and at `matches` (sorted, non-overlapping).
std::vector<Span> spans_of(size_t n, const std::vector<std::pair<size_t, size_t>>& matches, bool invert) {
  std::vector<Span> spans;
  size_t pos = 0;
  for (const auto& m : matches) {
    if (m.first > pos) spans.push_back({pos, m.first, invert});
    spans.push_back({m.first, m.second, !invert});
    pos = m.second;
  }
  if (pos < n) spans.push_back({pos, n, invert});
  return spans;
}

// Each numeric code point (Rust's char::is_numeric: Nd, Nl, No) as its own match.
std::vector<std::pair<size_t, size_t>> digit_matches(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> m;
  for (size_t i = 0, len = 0; i < text.size(); i += len)
    if (is_number(utf8_decode(text.data() + i, text.size() - i, &len))) m.emplace_back(i, i + len);
  return m;
}

std::vector<std::pair<size_t, size_t>> string_matches(const std::string& text, const std::string& pattern) {
  std::vector<std::pair<size_t, size_t>> m;
  if (pattern.empty()) return m;
  for (size_t hit, pos = 0; (hit = text.find(pattern, pos)) != std::string::npos; pos = hit + pattern.size())
    m.emplace_back(hit, hit + pattern.size());
  return m;
}

std::string replace_spaces(const std::string& text, const std::string& with) {
  std::string out;
  for (char c : text) c == ' ' ? out += with : out += c;
  return out;
}

}  // namespace

bool HfPreTokenizer::parse(JsonRef json, std::string* error) {
  steps_.clear();
  if (json.missing() || json.is_null()) return true;
  return parse_step(json, error);
}

bool HfPreTokenizer::parse_step(JsonRef json, std::string* error) {
  std::string_view type = json.get("type").str();
  Step step;
  if (type == "Sequence") {
    JsonRef list = json.get("pretokenizers");
    if (!list.is_array()) return *error = "pre_tokenizer Sequence has no \"pretokenizers\" list", false;
    for (size_t i = 0; i < list.size(); ++i)
      if (!parse_step(list.at(i), error)) return false;
    return true;
  } else if (type == "Split") {
    bool is_regex = false;
    if (!parse_hf_pattern(json.get("pattern"), "pre_tokenizer Split", &is_regex, &step.text, error)) return false;
    step.kind = is_regex ? Step::SplitRegex : Step::SplitString;
    if (is_regex && !step.regex.compile(step.text, error)) {
      *error = "pre_tokenizer Split: pattern '" + pattern_for_message(step.text) + "' is not supported: " + *error;
      return false;
    }
    std::string_view b = json.get("behavior").str();
    if (b == "Isolated") step.behavior = Behavior::Isolated;
    else if (b == "Removed") step.behavior = Behavior::Removed;
    else if (b == "MergedWithPrevious") step.behavior = Behavior::MergedWithPrevious;
    else if (b == "MergedWithNext") step.behavior = Behavior::MergedWithNext;
    else if (b == "Contiguous") step.behavior = Behavior::Contiguous;
    else return *error = "pre_tokenizer Split: unknown behavior '" + std::string(b) + "'", false;
    step.invert = json.get("invert").boolean();
  } else if (type == "ByteLevel") {
    step.kind = Step::ByteLevel;
    step.flag = json.get("add_prefix_space").boolean();
    step.use_regex = json.get("use_regex").missing() || json.get("use_regex").boolean();
    if (step.use_regex && !step.regex.compile(kGpt2Pattern, error)) return false;
    byte_level_ = true;
  } else if (type == "Digits") {
    step.kind = Step::Digits;
    step.flag = json.get("individual_digits").boolean();
    step.behavior = step.flag ? Behavior::Isolated : Behavior::Contiguous;
  } else if (type == "Metaspace") {
    step.kind = Step::Metaspace;
    step.text = json.get("replacement").is_string() ? std::string(json.get("replacement").str()) : "\xE2\x96\x81";
    std::string_view scheme = json.get("prepend_scheme").str();
    if (scheme.empty()) step.prepend = json.get("add_prefix_space").boolean() ? 0 : 2;  // older files
    else if (scheme == "always") step.prepend = 0;
    else if (scheme == "first") step.prepend = 1;
    else if (scheme == "never") step.prepend = 2;
    else return *error = "pre_tokenizer Metaspace: unknown prepend_scheme '" + std::string(scheme) + "'", false;
    step.flag = json.get("split").missing() || json.get("split").boolean();
    step.behavior = Behavior::MergedWithNext;
    metaspace_ = step.text;
  } else {
    *error = "pre_tokenizer '" + std::string(type.empty() ? "(no type)" : type) +
             "' is not supported (supported: Sequence, Split, ByteLevel, Digits, Metaspace)";
    return false;
  }
  steps_.push_back(std::move(step));
  return true;
}

void HfPreTokenizer::apply(const std::string& text, bool at_start, std::vector<Piece>* out) const {
  std::vector<Piece> pieces{{text, at_start}}, next;
  for (const Step& step : steps_) {
    next.clear();
    for (const Piece& p : pieces) apply_step(step, p, &next);
    pieces.swap(next);
  }
  for (Piece& p : pieces)
    if (!p.text.empty()) out->push_back(std::move(p));
}

void HfPreTokenizer::apply_step(const Step& step, const Piece& piece, std::vector<Piece>* out) const {
  std::string text = piece.text;
  std::vector<std::pair<size_t, size_t>> matches;
  bool split = true;
  switch (step.kind) {
    case Step::SplitRegex: step.regex.find_all(text, &matches); break;
    case Step::SplitString: matches = string_matches(text, step.text); break;
    case Step::Digits: matches = digit_matches(text); break;
    case Step::ByteLevel:
      if (step.flag && (text.empty() || text[0] != ' ')) text = " " + text;
      split = step.use_regex;
      if (split) step.regex.find_all(text, &matches);
      break;
    case Step::Metaspace:
      text = replace_spaces(text, step.text);
      if ((step.prepend == 0 || (step.prepend == 1 && piece.at_start)) &&
          text.compare(0, step.text.size(), step.text) != 0)
        text = step.text + text;
      split = step.flag;
      if (split) matches = string_matches(text, step.text);
      break;
  }
  if (!split) {
    out->push_back({text, piece.at_start});
    return;
  }
  // Hugging Face's SplitDelimiterBehavior over the spans; `merge` joins a span to its neighbour.
  std::vector<Span> spans = spans_of(text.size(), matches, step.invert);
  std::vector<Span> kept;
  bool previous_match = false;
  auto last = [&]() -> Span* { return kept.empty() ? nullptr : &kept.back(); };
  if (step.behavior == Behavior::MergedWithNext) {
    for (size_t k = spans.size(); k-- > 0;) {
      const Span& s = spans[k];
      if (s.is_match && !previous_match && last()) last()->begin = s.begin;
      else kept.push_back({s.begin, s.end, false});
      previous_match = s.is_match;
    }
    std::vector<Span> reversed(kept.rbegin(), kept.rend());
    kept.swap(reversed);
  } else {
    for (const Span& s : spans) {
      bool join = false;
      if (step.behavior == Behavior::Contiguous) join = s.is_match == previous_match && last();
      if (step.behavior == Behavior::MergedWithPrevious) join = s.is_match && !previous_match && last();
      if (step.behavior == Behavior::Removed && s.is_match) {
        previous_match = true;
        continue;
      }
      if (join) last()->end = s.end;
      else kept.push_back({s.begin, s.end, false});
      previous_match = s.is_match;
    }
  }
  for (const Span& s : kept) out->push_back({text.substr(s.begin, s.end - s.begin), piece.at_start && s.begin == 0});
}

}  // namespace detail
}  // namespace pocket
