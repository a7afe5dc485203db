// Regex matching: character classes, the backtracking matcher and find_all (compiling is in
// regex_compile.cpp).
#include "tokenizer/regex.h"

#include <algorithm>

#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {

std::string pattern_for_message(std::string_view pattern) {
  if (pattern.size() <= 80) return std::string(pattern);
  size_t cut = 72;
  while (cut > 0 && (static_cast<unsigned char>(pattern[cut]) & 0xC0) == 0x80) --cut;
  return std::string(pattern.substr(0, cut)) + "...";
}

// ---- character classes

bool Regex::CharClass::test_exact(uint32_t cp) const {
  for (const ClassItem& it : items) {
    bool hit = false;
    switch (it.kind) {
      case ClassItem::Range: hit = cp >= it.lo && cp <= it.hi; break;
      case ClassItem::Category: hit = (it.mask & category_bit(unicode_category(cp))) != 0; break;
      case ClassItem::NotCategory: hit = (it.mask & category_bit(unicode_category(cp))) == 0; break;
      case ClassItem::Space: hit = is_whitespace(cp); break;
      case ClassItem::NotSpace: hit = !is_whitespace(cp); break;
      case ClassItem::Word: hit = (it.mask & category_bit(unicode_category(cp))) != 0; break;
      case ClassItem::NotWord: hit = (it.mask & category_bit(unicode_category(cp))) == 0; break;
    }
    if (hit) return true;
  }
  return false;
}

bool Regex::CharClass::test(uint32_t cp) const {
  if (any_but_newline) return cp != '\n';
  bool hit = test_exact(cp);
  if (!hit && icase) {
    uint32_t folded = case_fold(cp);
    hit = (folded != cp && test_exact(folded)) ||
          (folded >= 'a' && folded <= 'z' && test_exact(folded - 32));
  }
  return hit != negated;
}

// ---- matching

// The text being matched and the work left: a pattern from a file could backtrack
// exponentially, so find_all has a step budget; when it runs out, matching stops.
struct Regex::Subject {
  const uint32_t* cps;
  size_t n;
  size_t budget;
  bool spend(size_t steps) {
    if (budget < steps) return budget = 0, false;
    budget -= steps;
    return true;
  }
};

bool Regex::match(int node, Subject* s, size_t pos, size_t* end) const {
  for (;;) {
    if (!s->spend(1)) return false;
    const Node& nd = nodes_[node];
    switch (nd.kind) {
      case Node::Accept:
        *end = pos;
        return true;
      case Node::Char:
        if (pos >= s->n || !classes_[nd.cls].test(s->cps[pos])) return false;
        ++pos;
        break;
      case Node::Repeat: {
        const CharClass& c = classes_[nd.cls];
        size_t limit = std::min<size_t>(s->n - pos, nd.max);
        size_t k = 0;
        if (nd.quant == Quant::Lazy) {
          for (;; ++k) {
            if (k >= nd.min && match(nd.next, s, pos + k, end)) return true;
            if (k >= limit || !s->spend(1) || !c.test(s->cps[pos + k])) return false;
          }
        }
        while (k < limit && c.test(s->cps[pos + k])) ++k;
        if (k < nd.min || !s->spend(k)) return false;
        if (nd.quant == Quant::Greedy) {
          for (size_t j = k; j > nd.min; --j)
            if (match(nd.next, s, pos + j, end)) return true;
          k = nd.min;
        }
        pos += k;
        break;
      }
      case Node::Split:
        for (size_t b = 0; b + 1 < nd.branches.size(); ++b)
          if (match(nd.branches[b], s, pos, end)) return true;
        node = nd.branches.back();
        continue;
      case Node::Look: {
        size_t ignored;
        if (match(nd.sub, s, pos, &ignored) == nd.negate) return false;
        break;
      }
      case Node::Bol:
        if (pos != 0) return false;
        break;
      case Node::Eol:
        if (pos != s->n) return false;
        break;
    }
    node = nd.next;
  }
}

void Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>* matches) const {
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;  // byte offset of each code point, plus the end
  cps.reserve(text.size());
  offsets.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size();) {
    size_t len = 0;
    cps.push_back(utf8_decode(text.data() + i, text.size() - i, &len));
    offsets.push_back(i);
    i += len;
  }
  offsets.push_back(text.size());
  const size_t n = cps.size();
  // Linear patterns like Llama 3's take a few steps per code point; a pattern that needs more
  // than 256 per code point is backtracking badly and the rest of the text stays unmatched.
  Subject subject{cps.data(), n, 256 * n + 65536};
  for (size_t pos = 0; pos < n;) {
    size_t start = pos, end = 0;
    bool found = false;
    for (; start < n && !found; ++start) {
      found = match(start_, &subject, start, &end);
      if (subject.budget == 0) return;
    }
    if (!found) break;
    --start;
    if (end == start) {  // empty matches split nothing
      pos = start + 1;
      continue;
    }
    matches->emplace_back(offsets[start], offsets[end]);
    pos = end;
  }
}

}  // namespace detail
}  // namespace pocket
