// What every tokenizer format shares behind pocket::Tokenizer: the vocabulary (text, piece and
// flags per id, bos/eos) and the two virtual steps that differ by format, encode and decode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pocket/tokenizer.h"

namespace pocket {
namespace detail {

struct Vocab {
  std::vector<std::string> text;   // as written in the file ("Ġthe", "<0x0A>", "<|eot_id|>")
  std::vector<std::string> piece;  // the bytes it adds to decoded text
  std::vector<uint8_t> special;
  std::unordered_map<std::string, int32_t> ids;  // text -> id (the first id wins)
  int32_t bos = -1;
  std::vector<int32_t> eos;

  void resize(size_t n);
  void set(int32_t id, std::string token_text, std::string token_piece, bool is_special);
  int32_t find(const std::string& token_text) const;
  // bos and eos from the usual names ("<s>", "<|begin_of_text|>", "</s>", "<|eot_id|>", ...).
  void guess_bos_eos();
};

class TokenizerImpl {
 public:
  virtual ~TokenizerImpl() = default;
  virtual Tokenizer::Format format() const = 0;
  virtual const char* format_name() const = 0;
  // Appends the ids of `text` (no bos).
  virtual Error encode(const std::string& text, bool parse_special, std::vector<int32_t>* out,
                       std::string* message) const = 0;
  // Appends the bytes of ids, all in [0, vocab size). By default the concatenated pieces.
  virtual void decode(const int32_t* ids, size_t n, bool skip_special, std::string* out) const;

  Vocab vocab;
};

// The readers, one per format (data is the whole file). Messages start with the format
// ("tokenizer.json: ...", "tiktoken file: ...", "llama2.c tokenizer: ...").
Error load_hf_json(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message);
Error load_tiktoken(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message);
Error load_llama2c(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message);

// Format sniffing for the loader.
bool looks_like_tiktoken(const char* data, size_t size);
bool looks_like_llama2c(const char* data, size_t size);

}  // namespace detail
}  // namespace pocket
