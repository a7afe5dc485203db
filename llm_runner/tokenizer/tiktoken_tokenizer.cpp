// tiktoken files, as Llama 3 ships its tokenizer.model: one token per line,
//   <base64 of the token's bytes> <rank>
// ranks are the token ids and the merge priorities (a pair of adjacent pieces merges when
// their concatenation is a token; the lowest rank first). Text is split with Llama 3's pattern
// and the 256 special tokens of Llama 3.1 follow the last rank:
//   <|begin_of_text|> <|end_of_text|> <|reserved_special_token_0|> <|reserved_special_token_1|>
//   <|finetune_right_pad_id|> <|reserved_special_token_2|> <|start_header_id|>
//   <|end_header_id|> <|eom_id|> <|eot_id|> <|python_tag|> <|reserved_special_token_3..247|>
#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/regex.h"
#include "tokenizer/tokenizer_impl.h"

namespace pocket {
namespace detail {
namespace {

const char* const kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr int kNumSpecial = 256;
constexpr int64_t kMaxRank = 1 << 24;

std::vector<std::string> llama3_specials() {
  std::vector<std::string> names = {"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                                    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>",
                                    "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>",
                                    "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"};
  for (int i = 3; names.size() < kNumSpecial; ++i)
    names.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
  return names;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode(std::string_view s, std::string* out) {
  out->clear();
  while (!s.empty() && s.back() == '=') s.remove_suffix(1);
  if (s.size() % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

class TiktokenTokenizer : public TokenizerImpl, public PairRanker {
 public:
  Tokenizer::Format format() const override { return Tokenizer::Format::Tiktoken; }
  const char* format_name() const override { return "tiktoken"; }

  Error encode(const std::string& text, bool parse_special, std::vector<int32_t>* out,
               std::string* message) const override {
    std::vector<Segment> segments;
    std::vector<std::pair<size_t, size_t>> matches;
    specials.split(text, true, parse_special, &segments);
    for (const Segment& s : segments) {
      if (s.id >= 0) {
        out->push_back(s.id);
        continue;
      }
      matches.clear();
      pattern.find_all(s.text, &matches);
      size_t pos = 0;  // text between matches (none with this pattern) is a chunk too
      for (const auto& m : matches) {
        if (m.first > pos) encode_chunk(std::string_view(s.text).substr(pos, m.first - pos), out);
        encode_chunk(std::string_view(s.text).substr(m.first, m.second - m.first), out);
        pos = m.second;
      }
      if (pos < s.text.size()) encode_chunk(std::string_view(s.text).substr(pos), out);
    }
    return Error::Ok;
  }

  bool rank(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const override {
    std::string joined = vocab.piece[left] + vocab.piece[right];
    auto it = by_bytes.find(joined);
    if (it == by_bytes.end()) return false;
    *rank = *merged = it->second;
    return true;
  }

  void encode_chunk(std::string_view chunk, std::vector<int32_t>* out) const {
    auto it = by_bytes.find(chunk);
    if (it != by_bytes.end()) {
      out->push_back(it->second);
      return;
    }
    std::vector<int32_t> symbols;
    symbols.reserve(chunk.size());
    for (unsigned char b : chunk) symbols.push_back(byte_ids[b]);
    bpe_merge(*this, &symbols);
    out->insert(out->end(), symbols.begin(), symbols.end());
  }

  Regex pattern;
  std::unordered_map<std::string_view, int32_t> by_bytes;  // views of vocab.piece
  int32_t byte_ids[256];
  AddedTokenSplitter specials;
};

Error fail(Error e, const std::string& what, std::string* message) {
  *message = "tiktoken file: " + what;
  return e;
}

// Reads the "<base64> <rank>" lines into (bytes, rank) pairs.
Error read_ranks(const char* data, size_t size, std::vector<std::pair<std::string, int32_t>>* out,
                 std::string* message) {
  std::string_view text(data, size);
  std::string bytes;
  size_t line = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty()) continue;
    size_t space = l.find(' ');
    std::string_view b64 = l.substr(0, space), num = space == std::string_view::npos ? "" : l.substr(space + 1);
    int64_t rank = num.empty() ? -1 : 0;
    for (char c : num) rank = (rank >= 0 && rank < kMaxRank && c >= '0' && c <= '9') ? rank * 10 + (c - '0') : -1;
    std::string where = "line " + std::to_string(line) + ": ";
    if (rank < 0 || rank >= kMaxRank)
      return fail(Error::InvalidProgram, where + "expected \"<base64 token> <rank>\" with a rank below 2^24", message);
    if (!base64_decode(b64, &bytes) || bytes.empty())
      return fail(Error::InvalidProgram, where + "the token is not valid base64", message);
    out->emplace_back(bytes, static_cast<int32_t>(rank));
  }
  if (out->empty()) return fail(Error::InvalidProgram, "no tokens", message);
  return Error::Ok;
}

Error build_vocab(const std::vector<std::pair<std::string, int32_t>>& ranks, TiktokenTokenizer* tok,
                  std::string* message) {
  int32_t n_base = 0;
  for (const auto& r : ranks) n_base = std::max(n_base, r.second + 1);
  if (static_cast<size_t>(n_base) > 2 * ranks.size() + 1024)  // holes cost memory
    return fail(Error::InvalidProgram, "rank " + std::to_string(n_base - 1) + " is far beyond the " +
                                           std::to_string(ranks.size()) + " tokens", message);
  Vocab& v = tok->vocab;
  v.resize(static_cast<size_t>(n_base) + kNumSpecial);
  std::vector<uint8_t> seen(n_base, 0);
  for (const auto& r : ranks) {
    if (seen[r.second])
      return fail(Error::InvalidProgram, "rank " + std::to_string(r.second) + " appears twice", message);
    seen[r.second] = 1;
    v.set(r.second, byte_level_encode(r.first), r.first, false);
  }
  tok->by_bytes.reserve(ranks.size());
  for (const auto& r : ranks)
    if (!tok->by_bytes.emplace(v.piece[r.second], r.second).second)
      return fail(Error::InvalidProgram, "token \"" + v.text[r.second] + "\" appears twice", message);
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    auto it = tok->by_bytes.find(std::string_view(&byte, 1));
    if (it == tok->by_bytes.end()) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return fail(Error::InvalidProgram,
                  std::string("byte ") + hex + " has no token (tiktoken vocabularies have all 256)", message);
    }
    tok->byte_ids[b] = it->second;
  }
  std::vector<std::string> names = llama3_specials();
  for (int i = 0; i < kNumSpecial; ++i) {
    AddedToken t;
    t.content = names[i];
    t.id = n_base + i;
    t.special = true;
    v.set(t.id, t.content, t.content, true);
    tok->specials.add(t, t.content);
  }
  v.bos = n_base;                             // <|begin_of_text|>
  v.eos = {n_base + 1, n_base + 9, n_base + 8};  // <|end_of_text|>, <|eot_id|>, <|eom_id|>
  return Error::Ok;
}

}  // namespace

bool looks_like_tiktoken(const char* data, size_t size) {
  size_t i = 0;
  while (i < size && base64_value(data[i]) >= 0) ++i;
  while (i < size && data[i] == '=') ++i;
  if (i == 0 || i >= size || data[i] != ' ') return false;
  size_t digits = ++i;
  while (i < size && data[i] >= '0' && data[i] <= '9') ++i;
  return i > digits && (i == size || data[i] == '\n' || data[i] == '\r');
}

Error load_tiktoken(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message) {
  std::vector<std::pair<std::string, int32_t>> ranks;
  Error e = read_ranks(data, size, &ranks, message);
  if (e != Error::Ok) return e;
  std::unique_ptr<TiktokenTokenizer> tok(new TiktokenTokenizer());
  e = build_vocab(ranks, tok.get(), message);
  if (e != Error::Ok) return e;
  std::string error;
  if (!tok->pattern.compile(kLlama3Pattern, &error)) return fail(Error::Internal, error, message);
  *out = std::move(tok);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
