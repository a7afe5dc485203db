// The "model" section of a tokenizer.json when its type is BPE: vocab, merges (as "a b"
// strings or ["a", "b"] pairs) and the options byte_fallback, unk_token, fuse_unk and
// ignore_merges. A byte-level model (ByteLevel pre-tokenizer) works on raw bytes: its
// vocabulary is converted from GPT-2's byte alphabet once, at load.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/json.h"

namespace pocket {
namespace detail {

class HfBpeModel : public PairRanker {
 public:
  // Reads the model object; `byte_level` says whether the input chunks are bytes (ByteLevel
  // pre-tokenizer) or characters. On failure sets *error.
  bool parse(JsonRef model, bool byte_level, std::string* error);

  // (text, id) of every vocabulary entry, in file order.
  const std::vector<std::pair<std::string, int32_t>>& entries() const { return entries_; }
  void drop_entries() { std::vector<std::pair<std::string, int32_t>>().swap(entries_); }
  int32_t max_id() const { return max_id_; }

  // Appends the ids of one pre-tokenized chunk.
  void encode(std::string_view chunk, std::vector<int32_t>* out) const;

  bool rank(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const override;

 private:
  bool parse_vocab(JsonRef vocab, std::string* error);
  bool parse_merges(JsonRef merges, std::string* error);
  void initial_symbols(std::string_view chunk, std::vector<int32_t>* symbols) const;

  std::vector<std::pair<std::string, int32_t>> entries_;
  int32_t max_id_ = -1;
  // Chunk text -> id: the vocabulary text, or its bytes for a byte-level model.
  std::unordered_map<std::string, int32_t> lookup_;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left, right) -> (rank, merged)
  int32_t byte_ids_[256];      // byte-level: each byte's token
  int32_t fallback_ids_[256];  // <0xNN> byte-fallback tokens
  int32_t unk_ = -1;
  bool byte_level_ = false;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
};

}  // namespace detail
}  // namespace pocket
