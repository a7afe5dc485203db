// A small backtracking regex engine for the pre-tokenizer split patterns of GPT-2, Llama 3,
// Qwen2 and similar byte-level BPE tokenizers, e.g. (Llama 3):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// It works on code points with Unicode classes (std::regex has none). Semantics are those of
// Oniguruma / PCRE: leftmost match, alternatives tried in order, greedy by default.
//
// Supported: literals and escapes (\r \n \t \f \v \xHH \x{H..} \uHHHH, escaped punctuation);
// . ^ $; classes [...] and [^...] with ranges, \p{..}/\P{..} (general categories L, Lu, N, Nd,
// ...), \s \S \d \D \w \W inside and outside classes; groups (...) (?:...) (?i:...), inline
// (?i); lookahead (?=...) (?!...); quantifiers ? * + {n} {n,} {n,m} with lazy (?) and
// possessive (+) forms. * + {n,} apply to single-character atoms only, which is all these
// patterns need; a quantified group is limited to ? and {n,m} with m <= 16. "{n,m}+" is
// possessive as in PCRE and tiktoken (Oniguruma's Ruby syntax would read it as ({n,m})+).
// Limits for patterns from untrusted files: 32 nested groups, 2048 compiled nodes, and a step
// budget per find_all (256 per code point) after which the rest of the text stays unmatched.
// Case-insensitivity folds ASCII letters (plus U+017F, U+212A); that covers the (?i:'s|...)
// contractions. Matching never recurses per input character, so long inputs are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pocket {
namespace detail {

// `pattern` shortened for an error message (at most ~80 bytes, cut at a character boundary).
std::string pattern_for_message(std::string_view pattern);

class Regex {
 public:
  // Compiles `pattern`. On failure returns false and sets *error, e.g.
  //   "unsupported regex construct '(?<' at offset 4".
  bool compile(std::string_view pattern, std::string* error);

  // Appends the [begin, end) byte ranges of all non-overlapping matches in `text`, left to
  // right (like find_iter). Invalid UTF-8 bytes are single code points in no class.
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>* matches) const;

  struct ClassItem {
    enum Kind : uint8_t { Range, Category, NotCategory, Space, NotSpace, Word, NotWord } kind;
    uint32_t lo, hi;  // Range
    uint32_t mask;    // Category / NotCategory: category bits (unicode.h)
  };
  struct CharClass {
    std::vector<ClassItem> items;
    bool negated = false;
    bool icase = false;
    bool any_but_newline = false;  // '.'
    bool test(uint32_t cp) const;
    bool test_exact(uint32_t cp) const;
  };
  enum class Quant : uint8_t { Greedy, Lazy, Possessive };
  struct Node {
    enum Kind : uint8_t { Char, Repeat, Split, Look, Bol, Eol, Accept } kind;
    bool negate = false;  // Look
    Quant quant = Quant::Greedy;
    int next = -1;
    int cls = -1;         // Char, Repeat
    int sub = -1;         // Look: the start of its sub-pattern (ends in an Accept)
    uint32_t min = 0, max = 0;  // Repeat
    std::vector<int> branches;  // Split, in priority order
  };

 private:
  struct Subject;
  bool match(int node, Subject* s, size_t pos, size_t* end) const;

  std::vector<CharClass> classes_;
  std::vector<Node> nodes_;
  int start_ = -1;
  friend class RegexCompiler;
};

}  // namespace detail
}  // namespace pocket
