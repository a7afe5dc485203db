// Added tokens (special tokens like <|im_end|>, and user-added words) are found in the text
// before anything else, as Hugging Face tokenizers do: leftmost-longest matches, each token
// with its lstrip / rstrip / single_word options. What is left between them is text for the
// normalizer, pre-tokenizer and model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {
namespace detail {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool single_word = false;  // only match between non-word characters
  bool lstrip = false;       // swallow the whitespace before the match
  bool rstrip = false;       // swallow the whitespace after the match
  bool normalized = false;   // matched in normalized text (else in the raw input)
};

// A piece of the input: text still to tokenize (id < 0), or an added token's id.
struct Segment {
  std::string text;
  int32_t id = -1;
  bool at_start = false;  // begins at byte 0 of the input (Metaspace's prepend_scheme "first")
};

class AddedTokenSplitter {
 public:
  // Matches `pattern` (the token's content, normalized for normalized tokens) as `token`.
  void add(const AddedToken& token, const std::string& pattern);
  bool empty() const { return tokens_.empty(); }

  // Appends the segments of `text`; with parse_special false, special tokens stay text.
  void split(const std::string& text, bool at_start, bool parse_special, std::vector<Segment>* out) const;

 private:
  struct Node {
    int32_t token = -1;  // index in tokens_ of the pattern ending here
    std::vector<std::pair<unsigned char, int32_t>> next;
  };
  // The longest pattern starting at text[pos]: its token index and length, or -1.
  int32_t longest_at(std::string_view text, size_t pos, size_t* len) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_{Node{}};
  bool first_byte_[256] = {};
};

}  // namespace detail
}  // namespace pocket
