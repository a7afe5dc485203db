// The "decoder" section of a tokenizer.json, turned into per-token pieces plus the few rules
// that look at the whole output. Supported: Sequence, ByteLevel, Replace (string pattern),
// ByteFallback, Fuse, Strip and Metaspace. With no decoder, Hugging Face joins the token
// texts with spaces; so does this.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json.h"

namespace pocket {
namespace detail {

class HfDecoder {
 public:
  // Reads `json` (null or a decoder object). On failure sets *error.
  bool parse(JsonRef json, std::string* error);

  // The bytes `token` (its vocabulary text) adds to decoded text.
  std::string piece(const std::string& token) const;

  // Decodes tokens given by their texts and pieces (the special ones already left out).
  void decode(const std::vector<const std::string*>& texts, const std::vector<const std::string*>& pieces,
              std::string* out) const;

 private:
  struct Step {
    enum Kind { ByteLevel, Replace, ByteFallback, Strip, Metaspace } kind;
    std::string from, to;    // Replace; Metaspace: from = the replacement
    std::string content;     // Strip: the character stripped
    size_t start = 0, stop = 0;  // Strip: how many at each end
  };
  bool parse_step(JsonRef json, std::string* error);

  std::vector<Step> per_token_;  // applied to each token on its own (before any Fuse)
  bool none_ = true;             // no decoder at all
  // Whole-output rules: Strip after Fuse, and Metaspace's "drop the first token's space".
  std::string strip_content_;
  size_t strip_start_ = 0, strip_stop_ = 0;
  std::string metaspace_first_;  // the replacement, when the first token loses its space
  bool fused_ = false;
};

}  // namespace detail
}  // namespace pocket
