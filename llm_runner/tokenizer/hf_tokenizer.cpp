#include "tokenizer/hf_tokenizer.h"

namespace pocket {
namespace detail {

Error HfTokenizer::encode(const std::string& text, bool parse_special, std::vector<int32_t>* out,
                          std::string* message) const {
  std::vector<Segment> raw, normalized;
  std::vector<HfPreTokenizer::Piece> chunks;
  raw_added.split(text, true, parse_special, &raw);
  for (const Segment& r : raw) {
    if (r.id >= 0) {
      out->push_back(r.id);
      continue;
    }
    normalized.clear();
    normalized_added.split(normalizer.apply(r.text), r.at_start, parse_special, &normalized);
    for (const Segment& s : normalized) {
      if (s.id >= 0) {
        out->push_back(s.id);
        continue;
      }
      chunks.clear();
      pre_tokenizer.apply(s.text, s.at_start, &chunks);
      for (const HfPreTokenizer::Piece& c : chunks) model.encode(c.text, out);
    }
  }
  return Error::Ok;
}

void HfTokenizer::decode(const int32_t* ids, size_t n, bool skip_special, std::string* out) const {
  std::vector<const std::string*> texts, pieces;
  texts.reserve(n);
  pieces.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (skip_special && vocab.special[ids[i]]) continue;
    texts.push_back(&vocab.text[ids[i]]);
    pieces.push_back(&vocab.piece[ids[i]]);
  }
  decoder.decode(texts, pieces, out);
}

}  // namespace detail
}  // namespace pocket
