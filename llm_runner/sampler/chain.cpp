// Candidates, the RNG and the sampler chain.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pocket/sampler.h"

namespace pocket {

void Candidates::sort_desc() {
  if (sorted) return;
  std::sort(items.begin(), items.end(), [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  sorted = true;
}

void Candidates::softmax() {
  sort_desc();
  if (items.empty()) return;
  const float max = items[0].logit;
  double sum = 0;
  for (Candidate& c : items) sum += c.prob = std::exp(c.logit - max);
  for (Candidate& c : items) c.prob = static_cast<float>(c.prob / sum);
}

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Rng::uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1ull << 24); }

void SamplerChain::apply(Candidates& c, Rng& rng) {
  for (auto& s : chain_) {
    if (c.selected >= 0) return;
    s->apply(c, rng);
  }
}

void SamplerChain::accept(int32_t token) {
  for (auto& s : chain_) s->accept(token);
}

void SamplerChain::reset() {
  for (auto& s : chain_) s->reset();
}

int32_t SamplerChain::sample(const float* logits, size_t n) {
  Candidates& c = candidates_;
  c.items.resize(n);
  for (size_t i = 0; i < n; ++i) c.items[i] = Candidate{static_cast<int32_t>(i), logits[i], 0.0f};
  c.sorted = false;
  c.selected = -1;
  apply(c, rng_);
  if (c.selected < 0) {  // nothing picked: the most likely remaining candidate
    c.sort_desc();
    c.selected = c.items.empty() ? 0 : c.items[0].id;
  }
  accept(c.selected);
  return c.selected;
}

std::string validate_sampler_config(const SamplerConfig& s) {
  char buf[128];
  if (!(s.temperature >= 0) || std::isinf(s.temperature))
    snprintf(buf, sizeof buf, "temperature must be >= 0, got %g", s.temperature);
  else if (s.top_k < 0)
    snprintf(buf, sizeof buf, "top_k must be >= 0, got %d", s.top_k);
  else if (!(s.top_p > 0 && s.top_p <= 1))
    snprintf(buf, sizeof buf, "top_p must be in (0, 1], got %g", s.top_p);
  else if (!(s.min_p >= 0 && s.min_p <= 1))
    snprintf(buf, sizeof buf, "min_p must be in [0, 1], got %g", s.min_p);
  else if (!(s.repetition_penalty > 0) || std::isinf(s.repetition_penalty))  // inf * a zero logit is NaN
    snprintf(buf, sizeof buf, "repetition_penalty must be > 0 and finite, got %g", s.repetition_penalty);
  else if (s.repeat_last_n < 0)
    snprintf(buf, sizeof buf, "repeat_last_n must be >= 0, got %d", s.repeat_last_n);
  else
    return "";
  return buf;
}

std::unique_ptr<SamplerChain> make_sampler(const SamplerConfig& s) {
  auto chain = std::make_unique<SamplerChain>(s.seed);
  if (s.repetition_penalty != 1.0f && s.repeat_last_n > 0)
    chain->add(make_repetition_penalty(s.repetition_penalty, s.repeat_last_n));
  if (s.temperature <= 0.0f) {
    chain->add(make_greedy());
    return chain;
  }
  chain->add(make_temperature(s.temperature));
  if (s.top_k > 0) chain->add(make_top_k(s.top_k));
  if (s.top_p < 1.0f) chain->add(make_top_p(s.top_p));
  if (s.min_p > 0.0f) chain->add(make_min_p(s.min_p));
  chain->add(make_random_pick());
  return chain;
}

}  // namespace pocket
