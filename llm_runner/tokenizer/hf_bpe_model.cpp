#include "tokenizer/hf_bpe_model.h"

#include <cstdio>

#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {
namespace {

constexpr int64_t kMaxVocab = 1 << 24;

uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

bool HfBpeModel::parse(JsonRef model, bool byte_level, std::string* error) {
  byte_level_ = byte_level;
  for (const char* unsupported : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    JsonRef v = model.get(unsupported);
    if (v.is_string() && !v.str().empty())
      return *error = std::string("model.") + unsupported + " is not supported", false;
  }
  byte_fallback_ = model.get("byte_fallback").boolean();
  fuse_unk_ = model.get("fuse_unk").boolean();
  ignore_merges_ = model.get("ignore_merges").boolean();
  if (!parse_vocab(model.get("vocab"), error) || !parse_merges(model.get("merges"), error)) return false;
  JsonRef unk = model.get("unk_token");
  if (unk.is_string()) {
    for (const auto& e : entries_)
      if (e.first == unk.str()) unk_ = e.second;
    if (unk_ < 0) return *error = "model.unk_token " + quoted(unk.str()) + " is not in the vocabulary", false;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = byte_level_ ? lookup_.end() : lookup_.find(name);
    fallback_ids_[b] = it == lookup_.end() ? -1 : it->second;
    auto byte = lookup_.find(std::string(1, static_cast<char>(b)));
    byte_ids_[b] = byte == lookup_.end() ? -1 : byte->second;
  }
  return true;
}

bool HfBpeModel::parse_vocab(JsonRef vocab, std::string* error) {
  if (!vocab.is_object()) return *error = "model.vocab must be an object {token: id}", false;
  entries_.reserve(vocab.size());
  lookup_.reserve(vocab.size());
  std::string bytes;
  for (size_t i = 0; i < vocab.size(); ++i) {
    JsonRef id = vocab.value(i);
    if (!id.is_integer() || id.integer() < 0 || id.integer() >= kMaxVocab)
      return *error = "model.vocab[" + quoted(vocab.key(i)) + "] is not a token id (an integer in [0, 2^24))", false;
    int32_t v = static_cast<int32_t>(id.integer());
    std::string text(vocab.key(i));
    max_id_ = std::max(max_id_, v);
    if (!byte_level_) {
      lookup_.emplace(text, v);
    } else if (byte_level_decode(text, &bytes)) {
      lookup_.emplace(bytes, v);
    }
    entries_.emplace_back(std::move(text), v);
  }
  return true;
}

bool HfBpeModel::parse_merges(JsonRef merges, std::string* error) {
  if (merges.missing() || merges.is_null()) return true;
  if (!merges.is_array()) return *error = "model.merges must be a list", false;
  std::unordered_map<std::string_view, int32_t> ids;  // vocabulary text -> id
  ids.reserve(entries_.size());
  for (const auto& e : entries_) ids.emplace(e.first, e.second);
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    JsonRef m = merges.at(i);
    std::string_view a, b;
    if (m.is_string()) {
      std::string_view s = m.str();
      size_t space = s.find(' ');
      if (space == std::string_view::npos)
        return *error = "model.merges[" + std::to_string(i) + "] " + quoted(s) + " is not \"a b\"", false;
      a = s.substr(0, space), b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m.at(0).is_string() && m.at(1).is_string()) {
      a = m.at(0).str(), b = m.at(1).str();
    } else {
      return *error = "model.merges[" + std::to_string(i) + "] is neither \"a b\" nor [\"a\", \"b\"]", false;
    }
    auto ia = ids.find(a), ib = ids.find(b), im = ids.find(std::string(a) + std::string(b));
    const char* missing = ia == ids.end()   ? "its first token"
                          : ib == ids.end() ? "its second token"
                          : im == ids.end() ? "the merged token"
                                            : nullptr;
    if (missing)
      return *error = "model.merges[" + std::to_string(i) + "] (" + quoted(a) + ", " + quoted(b) + "): " + missing +
                      " is not in the vocabulary",
             false;
    merges_.emplace(pair_key(ia->second, ib->second), std::make_pair(static_cast<int32_t>(i), im->second));
  }
  return true;
}

bool HfBpeModel::rank(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const {
  auto it = merges_.find(pair_key(left, right));
  if (it == merges_.end()) return false;
  *rank = it->second.first;
  *merged = it->second.second;
  return true;
}

void HfBpeModel::initial_symbols(std::string_view chunk, std::vector<int32_t>* symbols) const {
  bool last_unk = false;
  std::string ch;
  for (size_t i = 0; i < chunk.size();) {
    size_t len = byte_level_ ? 1 : utf8_length(chunk.data() + i, chunk.size() - i);
    int32_t id = -1;
    if (byte_level_) {
      id = byte_ids_[static_cast<unsigned char>(chunk[i])];
    } else {
      ch.assign(chunk.data() + i, len);
      auto it = lookup_.find(ch);
      if (it != lookup_.end()) id = it->second;
    }
    if (id < 0 && byte_fallback_) {
      bool all = true;
      for (size_t k = 0; k < len; ++k) all = all && fallback_ids_[static_cast<unsigned char>(chunk[i + k])] >= 0;
      if (all) {
        for (size_t k = 0; k < len; ++k) symbols->push_back(fallback_ids_[static_cast<unsigned char>(chunk[i + k])]);
        last_unk = false;
        i += len;
        continue;
      }
    }
    if (id >= 0) {
      symbols->push_back(id);
      last_unk = false;
    } else if (unk_ >= 0 && !(fuse_unk_ && last_unk)) {  // no unk token: the character is dropped
      symbols->push_back(unk_);
      last_unk = true;
    }
    i += len;
  }
}

void HfBpeModel::encode(std::string_view chunk, std::vector<int32_t>* out) const {
  if (ignore_merges_) {
    auto it = lookup_.find(std::string(chunk));
    if (it != lookup_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  std::vector<int32_t> symbols;
  symbols.reserve(chunk.size());
  initial_symbols(chunk, &symbols);
  bpe_merge(*this, &symbols);
  out->insert(out->end(), symbols.begin(), symbols.end());
}

}  // namespace detail
}  // namespace pocket
