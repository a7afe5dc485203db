// What the tokenizer targets share: load a tokenizer from fuzzed bytes through the public
// loader (which tells the formats apart), then encode and decode fuzzed text with it.
//
// Input layout: [u16 little-endian n][n bytes of text][the tokenizer file]. fuzz/make_corpus.py
// writes the seeds this way.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pocket/tokenizer.h"

namespace pocket_fuzz {

// Longest text encoded per input: BPE on one long word is quadratic, which is a speed
// question, not a safety one.
constexpr size_t kMaxText = 4096;

// Encodes and decodes `text` in every mode; every id must lie in the vocabulary.
inline void exercise_tokenizer(const pocket::Tokenizer& tok, const std::string& text) {
  std::string message;
  for (bool parse_special : {true, false}) {
    pocket::EncodeOptions options;
    options.add_bos = parse_special;
    options.parse_special = parse_special;
    std::vector<int32_t> ids;
    pocket::Error e = tok.encode(text, options, &ids, &message);
    check(e != pocket::Error::Internal, "encode: internal error", message);
    check(e == pocket::Error::Ok || !message.empty(), "encode failed without a message");
    if (e != pocket::Error::Ok) continue;
    for (int32_t id : ids) check(id >= 0 && static_cast<size_t>(id) < tok.vocab_size(), "encode: id outside the vocabulary");
    for (bool skip_special : {false, true}) {
      std::string out;
      pocket::DecodeOptions d;
      d.skip_special = skip_special;
      e = tok.decode(ids.data(), ids.size(), d, &out, &message);
      check(e == pocket::Error::Ok, "decode of encoded ids failed", message);
    }
    for (int32_t id : ids) (void)tok.piece(id).size();
  }
  // Ids straight from the text's bytes: out-of-range ones must be refused, not read.
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 1 < text.size() && raw.size() < 64; i += 2)
    raw.push_back(static_cast<int32_t>(static_cast<uint8_t>(text[i]) | static_cast<uint8_t>(text[i + 1]) << 8) - 8);
  std::string out;
  pocket::Error e = tok.decode(raw.data(), raw.size(), pocket::DecodeOptions(), &out, &message);
  check(e == pocket::Error::Ok || e == pocket::Error::OutOfRange, "decode of raw ids", message);
  (void)tok.decode(raw);
  for (int32_t id : raw) (void)tok.token_text(id).size(), (void)tok.is_special(id), (void)tok.is_eos(id);
  (void)tok.token_id(text);
}

inline int fuzz_tokenizer_file(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t n = std::min<size_t>(data[0] | data[1] << 8, size - 2);
  std::string text(reinterpret_cast<const char*>(data + 2), std::min(n, kMaxText));
  data += 2 + n;
  size -= 2 + n;
  std::unique_ptr<pocket::Tokenizer> tok;
  std::string message;
  pocket::Error e = pocket::Tokenizer::load_buffer(data, size, &tok, &message);
  check(e != pocket::Error::Internal, "load: internal error", message);
  check(e == pocket::Error::Ok || !message.empty(), "load failed without a message");
  if (e == pocket::Error::Ok) exercise_tokenizer(*tok, text);
  return 0;
}

}  // namespace pocket_fuzz
