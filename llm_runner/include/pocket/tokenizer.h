// Tokenizers for the LLM runner: text <-> token ids for the model families Pocket runs.
//
// One loader reads every supported format and tells them apart by content:
//   - Hugging Face tokenizer.json with a BPE model:
//       byte-level BPE (GPT-2, Llama 3, Qwen2/2.5, SmolLM/SmolLM2: ByteLevel pre-tokenizer and
//       decoder, Split/Digits/Sequence pre-tokenizers, NFC normalizer), and
//       SentencePiece-style BPE with byte fallback (Llama 2, Mistral: Prepend/Replace
//       normalizers or a Metaspace pre-tokenizer, <0xNN> byte tokens);
//   - tiktoken files (Llama 3's tokenizer.model: "base64-token rank" lines), with the Llama 3
//     split pattern and its 256 special tokens (<|begin_of_text|> = number of ranks, ...);
//   - llama2.c tokenizer.bin (scores, merges by highest score, bos = 1, eos = 2).
// Wrong or corrupt files are errors that say what is wrong ("tokenizer.json: expected a BPE
// model, found WordPiece", "truncated JSON at byte 812", "not a tokenizer file ...").
//
//   std::unique_ptr<pocket::Tokenizer> tok;
//   std::string err;
//   if (pocket::Tokenizer::load("tokenizer.json", &tok, &err) != pocket::Error::Ok) {
//     fprintf(stderr, "%s\n", err.c_str());
//     return 1;
//   }
//   std::vector<int32_t> ids;
//   tok->encode("<|im_start|>user\nHi!<|im_end|>", /*add_bos=*/false, &ids, &err);
//   std::string text = tok->decode(ids);            // the bytes of the text again
//   std::string last = tok->piece(ids.back());      // bytes of one token, for streaming
//
// Errors are returned as pocket::Error plus a message; no exception leaves these functions
// (an allocation failure becomes Error::OutOfMemory). A loaded Tokenizer is immutable apart
// from set_bos_id()/set_eos_ids(), and its const functions may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pocket/error.h"

namespace pocket {

namespace detail {
class TokenizerImpl;
}

struct EncodeOptions {
  bool add_bos = false;       // prepend bos_id(), if the tokenizer has one (GPT-2, Qwen2 and
                              // SmolLM2 have none: nothing is added, as in Hugging Face)
  bool parse_special = true;  // special tokens written in the text ("<|im_end|>") become
                              // their ids; false encodes them as plain text
};

struct DecodeOptions {
  bool skip_special = false;  // leave special tokens (bos, eos, <|im_end|>, ...) out
};

class Tokenizer {
 public:
  // Which reader made the tokenizer.
  enum class Format { HfByteLevelBpe, HfSentencePieceBpe, Tiktoken, Llama2c };

  // Reads the file at `path` and detects its format. On failure returns the error and sets
  // *message ("tokenizer.json: expected a BPE model, found WordPiece (file 'x/tokenizer.json')");
  // *out is untouched.
  static Error load(const std::string& path, std::unique_ptr<Tokenizer>* out, std::string* message);
  // The same from `size` bytes at `data` (copied as needed; the caller keeps ownership).
  static Error load_buffer(const void* data, size_t size, std::unique_ptr<Tokenizer>* out,
                           std::string* message);
  static Error load_bytes(const std::string& bytes, std::unique_ptr<Tokenizer>* out, std::string* message) {
    return load_buffer(bytes.data(), bytes.size(), out, message);
  }

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Text (UTF-8; invalid bytes are kept as single bytes, never an error) -> ids, appended
  // to *out. A byte no token can spell is dropped, or <unk> where the vocabulary has one.
  Error encode(const std::string& text, const EncodeOptions& options, std::vector<int32_t>* out,
               std::string* message) const;
  Error encode(const std::string& text, bool add_bos, std::vector<int32_t>* out, std::string* message) const {
    EncodeOptions options;
    options.add_bos = add_bos;
    return encode(text, options, out, message);
  }

  // Ids -> the bytes of the text (appended to *out). The bytes of a cut-off or byte-fallback
  // sequence can be invalid UTF-8; the caller decides how to show them. An id outside
  // [0, vocab_size()) is Error::OutOfRange.
  Error decode(const int32_t* ids, size_t n, const DecodeOptions& options, std::string* out,
               std::string* message) const;
  // Convenience form: ids without a token (e.g. a model's padded vocabulary) decode to nothing,
  // as Hugging Face tokenizers do.
  std::string decode(const std::vector<int32_t>& ids) const;

  // The bytes one token adds to decoded text, for streaming: "▁the" -> " the", "<0x0A>" -> "\n",
  // "Ġworld" -> " world". Start-of-text rules of decode() (dropping the space a SentencePiece
  // tokenizer prepends) are not applied. Empty for an id outside [0, vocab_size()).
  const std::string& piece(int32_t id) const;

  // Ids run from 0 to vocab_size() - 1 (added and special tokens included).
  size_t vocab_size() const;
  // -1 when the tokenizer has no such token.
  int32_t bos_id() const;
  int32_t eos_id() const;
  // Every id that ends generation: eos_id() first, then end-of-turn tokens the file has
  // (<|eot_id|>, <|eom_id|>, <|im_end|>, <|endoftext|>, <end_of_turn>, ...).
  const std::vector<int32_t>& eos_ids() const;
  bool is_eos(int32_t id) const;
  bool is_special(int32_t id) const;

  // The id of a token written as in the file's vocabulary ("<|eot_id|>", "<s>", "Ġthe",
  // "▁the"), or -1.
  int32_t token_id(const std::string& token) const;
  // The token as written in the vocabulary ("" for an id without a token). For tiktoken files
  // this is the GPT-2 byte-to-unicode spelling, as in Llama 3's tokenizer.json.
  const std::string& token_text(int32_t id) const;

  // Overrides what the file implies (e.g. from a model's metadata). Ids must be in range.
  Error set_bos_id(int32_t id, std::string* message);  // -1: no bos
  Error set_eos_ids(const std::vector<int32_t>& ids, std::string* message);

  Format format() const;
  const char* format_name() const;  // "tokenizer.json (byte-level BPE)", "tiktoken", ...

 private:
  explicit Tokenizer(std::unique_ptr<detail::TokenizerImpl> impl);
  std::unique_ptr<detail::TokenizerImpl> impl_;
};

}  // namespace pocket
