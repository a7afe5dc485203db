// The individual samplers of a chain; each is a few lines over Candidates.
#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_set>

#include "pocket/sampler.h"

namespace pocket {
namespace {

class Greedy final : public Sampler {
 public:
  void apply(Candidates& c, Rng&) override {
    if (c.items.empty()) return;
    auto best = std::max_element(c.items.begin(), c.items.end(), [](const Candidate& a, const Candidate& b) {
      return a.logit < b.logit || (a.logit == b.logit && a.id > b.id);
    });
    c.selected = best->id;
  }
};

class Temperature final : public Sampler {
 public:
  explicit Temperature(float t) : t_(t) {}
  void apply(Candidates& c, Rng&) override {
    for (Candidate& x : c.items) x.logit /= t_;
  }

 private:
  float t_;
};

// Keeps the k most likely candidates.
class TopK final : public Sampler {
 public:
  explicit TopK(int32_t k) : k_(k) {}
  void apply(Candidates& c, Rng&) override {
    if (static_cast<size_t>(k_) >= c.items.size()) return;
    c.sort_desc();
    c.items.resize(static_cast<size_t>(k_));
  }

 private:
  int32_t k_;
};

// Keeps the smallest set of most likely candidates whose probability reaches p.
class TopP final : public Sampler {
 public:
  explicit TopP(float p) : p_(p) {}
  void apply(Candidates& c, Rng&) override {
    c.softmax();
    double cum = 0;
    size_t keep = c.items.size();
    for (size_t i = 0; i < c.items.size(); ++i) {
      cum += c.items[i].prob;
      if (cum >= p_) {
        keep = i + 1;
        break;
      }
    }
    c.items.resize(keep);
  }

 private:
  float p_;
};

// Drops candidates less likely than p times the most likely one.
class MinP final : public Sampler {
 public:
  explicit MinP(float p) : p_(p) {}
  void apply(Candidates& c, Rng&) override {
    c.softmax();
    const float floor = c.items.empty() ? 0.0f : c.items[0].prob * p_;
    size_t keep = 1;
    while (keep < c.items.size() && c.items[keep].prob >= floor) ++keep;
    c.items.resize(std::min(keep, c.items.size()));
  }

 private:
  float p_;
};

// Divides positive logits (multiplies negative ones) of recently generated tokens.
class RepetitionPenalty final : public Sampler {
 public:
  RepetitionPenalty(float penalty, int32_t last_n) : penalty_(penalty), last_n_(static_cast<size_t>(last_n)) {}
  void apply(Candidates& c, Rng&) override {
    std::unordered_set<int32_t> seen(recent_.begin(), recent_.end());
    for (Candidate& x : c.items)
      if (seen.count(x.id)) x.logit = x.logit > 0 ? x.logit / penalty_ : x.logit * penalty_;
    c.sorted = false;
  }
  void accept(int32_t token) override {
    recent_.push_back(token);
    if (recent_.size() > last_n_) recent_.pop_front();
  }
  void reset() override { recent_.clear(); }

 private:
  float penalty_;
  size_t last_n_;
  std::deque<int32_t> recent_;
};

// Picks a candidate at random, in proportion to its probability.
class RandomPick final : public Sampler {
 public:
  void apply(Candidates& c, Rng& rng) override {
    c.softmax();
    if (c.items.empty()) return;
    double sum = 0;
    for (const Candidate& x : c.items) sum += x.prob;
    double r = rng.uniform() * sum;
    for (const Candidate& x : c.items) {
      r -= x.prob;
      if (r < 0) {
        c.selected = x.id;
        return;
      }
    }
    c.selected = c.items.back().id;
  }
};

}  // namespace

std::unique_ptr<Sampler> make_greedy() { return std::make_unique<Greedy>(); }
std::unique_ptr<Sampler> make_temperature(float t) { return std::make_unique<Temperature>(t); }
std::unique_ptr<Sampler> make_top_k(int32_t k) { return std::make_unique<TopK>(k); }
std::unique_ptr<Sampler> make_top_p(float p) { return std::make_unique<TopP>(p); }
std::unique_ptr<Sampler> make_min_p(float p) { return std::make_unique<MinP>(p); }
std::unique_ptr<Sampler> make_repetition_penalty(float penalty, int32_t last_n) {
  return std::make_unique<RepetitionPenalty>(penalty, last_n);
}
std::unique_ptr<Sampler> make_random_pick() { return std::make_unique<RandomPick>(); }

}  // namespace pocket
