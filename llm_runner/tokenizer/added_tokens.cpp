#include "tokenizer/added_tokens.h"

#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {
namespace {

// The code point that ends text[0, end).
uint32_t last_code_point(std::string_view text, size_t end, size_t* start) {
  size_t s = end - 1;
  while (s > 0 && end - s < 4 && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
  size_t len = 0;
  uint32_t cp = utf8_decode(text.data() + s, end - s, &len);
  if (s + len != end) {  // not a whole code point: the last byte on its own
    s = end - 1;
    cp = kBadByte | static_cast<unsigned char>(text[s]);
  }
  *start = s;
  return cp;
}

// A regex \w character, as Hugging Face's single_word check uses: letters, marks, decimal and
// letter numbers, connector punctuation, ZWNJ/ZWJ (Alphabetic's few symbols, like Ⓐ, are left out).
bool is_word(uint32_t cp) {
  if (cp == 0x200C || cp == 0x200D) return true;
  using C = Category;
  C c = unicode_category(cp);
  return is_letter(cp) || c == C::Mn || c == C::Mc || c == C::Me || c == C::Nd || c == C::Nl || c == C::Pc;
}

}  // namespace

void AddedTokenSplitter::add(const AddedToken& token, const std::string& pattern) {
  if (pattern.empty()) return;
  int32_t node = 0;
  for (unsigned char b : pattern) {
    int32_t child = -1;
    for (const auto& edge : trie_[node].next)
      if (edge.first == b) child = edge.second;
    if (child < 0) {
      child = static_cast<int32_t>(trie_.size());
      trie_[node].next.emplace_back(b, child);
      trie_.emplace_back();
    }
    node = child;
  }
  if (trie_[node].token >= 0) return;  // the first token with this pattern wins
  trie_[node].token = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  first_byte_[static_cast<unsigned char>(pattern[0])] = true;
}

int32_t AddedTokenSplitter::longest_at(std::string_view text, size_t pos, size_t* len) const {
  int32_t node = 0, best = -1;
  for (size_t i = pos; i < text.size(); ++i) {
    int32_t child = -1;
    for (const auto& edge : trie_[node].next)
      if (edge.first == static_cast<unsigned char>(text[i])) child = edge.second;
    if (child < 0) break;
    node = child;
    if (trie_[node].token >= 0) best = trie_[node].token, *len = i + 1 - pos;
  }
  return best;
}

void AddedTokenSplitter::split(const std::string& text, bool at_start, bool parse_special,
                               std::vector<Segment>* out) const {
  std::string_view s(text);
  size_t done = 0;  // text before this is already in *out
  size_t pos = 0;
  while (!tokens_.empty() && pos < s.size()) {
    size_t len = 0;
    int32_t t = first_byte_[static_cast<unsigned char>(s[pos])] ? longest_at(s, pos, &len) : -1;
    if (t < 0 || (!parse_special && tokens_[t].special)) {
      pos += t < 0 ? 1 : len;
      continue;
    }
    const AddedToken& tok = tokens_[t];
    size_t start = pos, stop = pos + len, cp_start = 0;
    if (tok.single_word) {
      bool word_before = start > 0 && is_word(last_code_point(s, start, &cp_start));
      size_t next_len = 0;
      bool word_after = stop < s.size() && is_word(utf8_decode(s.data() + stop, s.size() - stop, &next_len));
      if (word_before || word_after) {
        pos = stop;
        continue;
      }
    }
    if (tok.lstrip) {
      while (start > done && is_whitespace(last_code_point(s, start, &cp_start))) start = cp_start;
    }
    if (tok.rstrip) {
      for (size_t l = 0; stop < s.size() && is_whitespace(utf8_decode(s.data() + stop, s.size() - stop, &l));)
        stop += l;
    }
    if (start > done) out->push_back(Segment{text.substr(done, start - done), -1, at_start && done == 0});
    out->push_back(Segment{text.substr(start, stop - start), tok.id, at_start && start == 0});
    done = pos = stop;
  }
  if (done < s.size()) out->push_back(Segment{text.substr(done), -1, at_start && done == 0});
}

}  // namespace detail
}  // namespace pocket
