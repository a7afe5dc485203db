// The "pre_tokenizer" section of a tokenizer.json: it cuts normalized text into the chunks the
// BPE model encodes one by one. Supported: Sequence, Split (regex or string pattern, every
// delimiter behavior, invert), ByteLevel (add_prefix_space, use_regex with the GPT-2 pattern),
// Digits (individual_digits) and Metaspace (replacement, prepend_scheme, split).
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json.h"
#include "tokenizer/regex.h"

namespace pocket {
namespace detail {

// The pattern the ByteLevel pre-tokenizer splits with when use_regex is set.
extern const char* const kGpt2Pattern;

class HfPreTokenizer {
 public:
  struct Piece {
    std::string text;
    bool at_start;  // begins at byte 0 of the input
  };

  // Reads `json` (null or a pre-tokenizer object). On failure sets *error.
  bool parse(JsonRef json, std::string* error);
  // A ByteLevel step is present: the model sees bytes, not characters.
  bool byte_level() const { return byte_level_; }
  // The Metaspace replacement character ("▁"), or "" without a Metaspace step.
  const std::string& metaspace() const { return metaspace_; }

  // Appends the chunks of `text` to *out.
  void apply(const std::string& text, bool at_start, std::vector<Piece>* out) const;

 private:
  enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };
  struct Step {
    enum Kind { SplitRegex, SplitString, ByteLevel, Digits, Metaspace } kind;
    Regex regex;            // SplitRegex; ByteLevel with use_regex
    std::string text;       // SplitString: the pattern; Metaspace: the replacement
    Behavior behavior = Behavior::Isolated;
    bool invert = false;
    bool flag = false;      // ByteLevel: add_prefix_space; Digits: individual; Metaspace: split
    bool use_regex = true;  // ByteLevel
    int prepend = 0;        // Metaspace: 0 always, 1 first, 2 never
  };
  bool parse_step(JsonRef json, std::string* error);
  void apply_step(const Step& step, const Piece& piece, std::vector<Piece>* out) const;

  std::vector<Step> steps_;
  bool byte_level_ = false;
  std::string metaspace_;
};

}  // namespace detail
}  // namespace pocket
