// A Hugging Face tokenizer.json with a BPE model, run as the tokenizers library runs it:
//   added tokens in the raw text -> normalizer -> added tokens in the normalized text ->
//   pre-tokenizer -> BPE model per chunk;   decoding: per-token pieces -> decoder rules.
#pragma once

#include "tokenizer/added_tokens.h"
#include "tokenizer/hf_bpe_model.h"
#include "tokenizer/hf_decoder.h"
#include "tokenizer/hf_normalizer.h"
#include "tokenizer/hf_pretokenizer.h"
#include "tokenizer/tokenizer_impl.h"

namespace pocket {
namespace detail {

class HfTokenizer : public TokenizerImpl {
 public:
  Tokenizer::Format format() const override {
    return pre_tokenizer.byte_level() ? Tokenizer::Format::HfByteLevelBpe : Tokenizer::Format::HfSentencePieceBpe;
  }
  const char* format_name() const override {
    return pre_tokenizer.byte_level() ? "tokenizer.json (byte-level BPE)" : "tokenizer.json (SentencePiece-style BPE)";
  }
  Error encode(const std::string& text, bool parse_special, std::vector<int32_t>* out,
               std::string* message) const override;
  void decode(const int32_t* ids, size_t n, bool skip_special, std::string* out) const override;

  HfNormalizer normalizer;
  HfPreTokenizer pre_tokenizer;
  HfBpeModel model;
  HfDecoder decoder;
  AddedTokenSplitter raw_added;         // added tokens with normalized = false
  AddedTokenSplitter normalized_added;  // with normalized = true, matched after normalizing
};

}  // namespace detail
}  // namespace pocket
