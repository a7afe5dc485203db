#include "tokenizer/bpe.h"

#include <queue>

namespace pocket {
namespace detail {
namespace {

struct Symbol {
  int32_t id;
  int32_t prev, next;  // neighbours still alive, -1 at the ends
};

struct Candidate {
  int32_t rank;
  int32_t left, right;  // symbol indices
  int32_t left_id, right_id, merged;
  // std::priority_queue is a max-heap: "less" means merges later.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

void bpe_merge(const PairRanker& ranker, std::vector<int32_t>* symbols) {
  const int32_t n = static_cast<int32_t>(symbols->size());
  if (n < 2) return;
  std::vector<Symbol> sym(n);
  for (int32_t i = 0; i < n; ++i) sym[i] = Symbol{(*symbols)[i], i - 1, i + 1 < n ? i + 1 : -1};

  std::priority_queue<Candidate> queue;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    Candidate c{0, left, right, sym[left].id, sym[right].id, 0};
    if (ranker.rank(c.left_id, c.right_id, &c.rank, &c.merged)) queue.push(c);
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i, i + 1);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& l = sym[c.left];
    // Skip pairs that earlier merges changed.
    if (l.id != c.left_id || l.next != c.right || sym[c.right].id != c.right_id) continue;
    Symbol& r = sym[c.right];
    l.id = c.merged;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = c.left;
    r.id = -1;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  symbols->clear();
  for (int32_t i = 0; i >= 0; i = sym[i].next) symbols->push_back(sym[i].id);
}

}  // namespace detail
}  // namespace pocket
