// The BPE merge loop shared by every tokenizer format: start from one symbol per character
// (or byte) and repeatedly merge the adjacent pair with the lowest rank, leftmost first, until
// no pair can merge. A priority queue of candidate pairs makes it O(n log n) in the symbols
// of a chunk, so a 10 KB chunk without spaces (SentencePiece style) is still fast.
#pragma once

#include <cstdint>
#include <vector>

namespace pocket {
namespace detail {

// Which adjacent pairs merge, into what, and how early.
class PairRanker {
 public:
  virtual ~PairRanker() = default;
  // If (left, right) merges, sets *rank (lower merges first) and *merged (the new id).
  virtual bool rank(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const = 0;
};

// Merges the ids in *symbols in place.
void bpe_merge(const PairRanker& ranker, std::vector<int32_t>* symbols);

}  // namespace detail
}  // namespace pocket
