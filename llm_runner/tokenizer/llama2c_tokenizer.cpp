// llama2.c's tokenizer.bin (little-endian):
//   int32 max_token_length
//   per token, to the end of the file:  float32 score, int32 length, `length` bytes
// Encoding follows llama2.c's encode(): a " " token first (the dummy prefix), then one token
// per UTF-8 character (a lead byte and up to three continuation bytes) or its bytes as <0xNN>
// tokens, then merges of the adjacent pair whose concatenation scores highest, leftmost
// first. bos = 1, eos = 2; decoding drops the leading space of the token after bos.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "tokenizer/bpe.h"
#include "tokenizer/tokenizer_impl.h"

namespace pocket {
namespace detail {
namespace {

constexpr int32_t kMaxTokenLength = 1 << 16;

int32_t read_i32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<int32_t>(uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24);
}

float read_f32(const char* p) {
  uint32_t bits = static_cast<uint32_t>(read_i32(p));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class Llama2cTokenizer : public TokenizerImpl, public PairRanker {
 public:
  Tokenizer::Format format() const override { return Tokenizer::Format::Llama2c; }
  const char* format_name() const override { return "llama2.c tokenizer.bin"; }

  Error encode(const std::string& text, bool parse_special, std::vector<int32_t>* out,
               std::string* message) const override {
    if (text.empty()) return Error::Ok;
    std::vector<int32_t> symbols;
    symbols.reserve(text.size() + 1);
    int32_t prefix = find(" ");
    if (prefix >= 0) symbols.push_back(prefix);
    for (size_t i = 0; i < text.size();) {
      size_t len = 1;
      while (len < 4 && i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
      int32_t id = find(text.substr(i, len));
      if (id >= 0) {
        symbols.push_back(id);
      } else {
        for (size_t k = 0; k < len; ++k) symbols.push_back(byte_ids[static_cast<unsigned char>(text[i + k])]);
      }
      i += len;
    }
    bpe_merge(*this, &symbols);
    out->insert(out->end(), symbols.begin(), symbols.end());
    return Error::Ok;
  }

  bool rank(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const override {
    int32_t id = find(vocab.text[left] + vocab.text[right]);
    if (id < 0) return false;
    *rank = score_rank[id];
    *merged = id;
    return true;
  }

  void decode(const int32_t* ids, size_t n, bool skip_special, std::string* out) const override {
    for (size_t i = 0; i < n; ++i) {
      if (skip_special && vocab.special[ids[i]]) continue;
      const std::string& p = vocab.piece[ids[i]];
      bool after_bos = i > 0 && ids[i - 1] == 1;
      out->append(p, after_bos && !p.empty() && p[0] == ' ' ? 1 : 0, std::string::npos);
    }
  }

  int32_t find(const std::string& text) const {
    auto it = by_text.find(text);
    return it == by_text.end() ? -1 : it->second;
  }

  // The file's texts only (vocab.ids also has the aliases <unk>, <s>, </s> for token_id()).
  std::unordered_map<std::string, int32_t> by_text;
  std::vector<int32_t> score_rank;  // 0 for the highest score; equal scores, equal ranks
  int32_t byte_ids[256];
};

Error fail(const std::string& what, std::string* message) {
  *message = "llama2.c tokenizer: " + what;
  return Error::InvalidProgram;
}

// "<0x0A>" -> '\n' as llama2.c's decode does; -1 for other tokens.
int byte_token(const std::string& t) {
  unsigned int b;
  char close;
  if (t.size() == 6 && std::sscanf(t.c_str(), "<0x%02X%c", &b, &close) == 2 && close == '>') return static_cast<int>(b);
  return -1;
}

void rank_scores(const std::vector<float>& scores, std::vector<int32_t>* ranks) {
  std::vector<float> sorted(scores);
  std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  ranks->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i)
    (*ranks)[i] = static_cast<int32_t>(std::lower_bound(sorted.begin(), sorted.end(), scores[i],
                                                        [](float a, float b) { return a > b; }) - sorted.begin());
}

}  // namespace

bool looks_like_llama2c(const char* data, size_t size) {
  if (size < 12) return false;
  int32_t max_len = read_i32(data), len = read_i32(data + 8);
  return max_len > 0 && max_len <= kMaxTokenLength && len >= 0 && len <= max_len && std::isfinite(read_f32(data + 4)) &&
         12 + static_cast<size_t>(len) <= size;
}

Error load_llama2c(const char* data, size_t size, std::unique_ptr<TokenizerImpl>* out, std::string* message) {
  int32_t max_len = read_i32(data);
  std::vector<std::string> texts;
  std::vector<float> scores;
  for (size_t pos = 4; pos < size;) {
    std::string where = "token " + std::to_string(texts.size()) + " at byte " + std::to_string(pos);
    if (size - pos < 8) return fail("truncated file: " + where + " needs a score and a length", message);
    float score = read_f32(data + pos);
    int32_t len = read_i32(data + pos + 4);
    if (!std::isfinite(score)) return fail(where + " has a score that is not a finite number", message);
    if (len < 0 || len > max_len)
      return fail(where + " has length " + std::to_string(len) + ", outside [0, max_token_length " +
                  std::to_string(max_len) + "]", message);
    if (size - pos - 8 < static_cast<size_t>(len)) return fail("truncated file: " + where + " is cut off", message);
    texts.emplace_back(data + pos + 8, static_cast<size_t>(len));
    scores.push_back(score);
    pos += 8 + static_cast<size_t>(len);
  }
  if (texts.size() < 3) return fail("fewer than 3 tokens (unk, bos, eos come first)", message);
  std::unique_ptr<Llama2cTokenizer> tok(new Llama2cTokenizer());
  Vocab& v = tok->vocab;
  v.resize(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    int b = byte_token(texts[i]);
    v.set(static_cast<int32_t>(i), texts[i], b >= 0 ? std::string(1, static_cast<char>(b)) : texts[i], i < 3);
  }
  tok->by_text = v.ids;
  const char* names[3] = {"<unk>", "<s>", "</s>"};  // llama2.c writes "\n<s>\n" and "\n</s>\n"
  for (int32_t i = 0; i < 3; ++i) v.ids.emplace(names[i], i);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    int32_t id = v.find(name);
    tok->byte_ids[b] = id >= 0 ? id : 0;  // no byte token: <unk>
  }
  rank_scores(scores, &tok->score_rank);
  v.bos = 1;
  v.eos = {2};
  *out = std::move(tok);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
