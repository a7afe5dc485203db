// The "normalizer" section of a tokenizer.json: Sequence, Prepend, Replace (string or regex
// pattern), NFC and Strip. Anything else is an error that names it.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json.h"
#include "tokenizer/regex.h"

namespace pocket {
namespace detail {

class HfNormalizer {
 public:
  // Reads `json` (null or a normalizer object). On failure sets *error.
  bool parse(JsonRef json, std::string* error);
  bool empty() const { return steps_.empty(); }
  std::string apply(const std::string& text) const;

 private:
  struct Step {
    enum Kind { Prepend, Replace, ReplaceRegex, Nfc, Strip } kind;
    std::string text;     // Prepend: the prefix; Replace: the pattern
    std::string content;  // Replace: the replacement
    Regex regex;
    bool left = false, right = false;  // Strip
  };
  bool parse_step(JsonRef json, std::string* error);
  std::vector<Step> steps_;
};

// Reads {"String": "..."} or {"Regex": "..."}: sets *is_regex and *pattern.
bool parse_hf_pattern(JsonRef json, const char* where, bool* is_regex, std::string* pattern, std::string* error);

}  // namespace detail
}  // namespace pocket
