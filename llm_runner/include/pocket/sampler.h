// Token samplers: each one narrows or reweights a list of candidate tokens, or picks one.
// A SamplerChain is itself a Sampler; make_sampler() builds the usual chain from a config:
//
//   repetition penalty -> temperature -> top-k -> top-p -> min-p -> random pick
//   (temperature 0: repetition penalty -> greedy)
//
//   pocket::SamplerConfig config;
//   config.temperature = 0.7f;
//   config.top_p = 0.9f;
//   config.seed = 42;
//   auto sampler = pocket::make_sampler(config);
//   int32_t token = sampler->sample(logits, vocab_size);   // same seed, same tokens
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pocket {

struct SamplerConfig {
  float temperature = 0.0f;         // 0: greedy
  int32_t top_k = 0;                // 0: off
  float top_p = 1.0f;               // 1: off
  float min_p = 0.0f;               // 0: off
  float repetition_penalty = 1.0f;  // 1: off; >1 discourages tokens seen in the last repeat_last_n
  int32_t repeat_last_n = 64;
  uint64_t seed = 0;
};

struct Candidate {
  int32_t id;
  float logit;
  float prob;  // filled by samplers that need probabilities
};

// The candidates one sampling step works on; samplers shrink, reorder or reweight them.
struct Candidates {
  std::vector<Candidate> items;
  bool sorted = false;       // by logit, descending
  int32_t selected = -1;     // set by the sampler that picks

  void sort_desc();
  // Softmax over the current logits into prob (sorted first).
  void softmax();
};

// splitmix64: small, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  float uniform();  // [0, 1)

 private:
  uint64_t state_;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual void apply(Candidates& c, Rng& rng) = 0;
  // Told each token that was generated (e.g. for repetition penalties).
  virtual void accept(int32_t token) { (void)token; }
  virtual void reset() {}
};

class SamplerChain final : public Sampler {
 public:
  explicit SamplerChain(uint64_t seed) : rng_(seed) {}
  void add(std::unique_ptr<Sampler> s) { chain_.push_back(std::move(s)); }
  void apply(Candidates& c, Rng& rng) override;
  void accept(int32_t token) override;
  void reset() override;

  // Runs the chain over `n` logits and returns the picked token (greedy if nothing picked).
  int32_t sample(const float* logits, size_t n);

 private:
  std::vector<std::unique_ptr<Sampler>> chain_;
  Rng rng_;
  Candidates candidates_;
};

std::unique_ptr<Sampler> make_greedy();
std::unique_ptr<Sampler> make_temperature(float t);
std::unique_ptr<Sampler> make_top_k(int32_t k);
std::unique_ptr<Sampler> make_top_p(float p);
std::unique_ptr<Sampler> make_min_p(float p);
std::unique_ptr<Sampler> make_repetition_penalty(float penalty, int32_t last_n);
std::unique_ptr<Sampler> make_random_pick();

// The standard chain for `config`, which must be valid: callers check it with
// validate_sampler_config() first and refuse a bad value (negative temperature, top_p outside
// (0, 1], ...); nothing is clamped.
std::unique_ptr<SamplerChain> make_sampler(const SamplerConfig& config);

// "" when valid, else a message naming the bad field and its value.
std::string validate_sampler_config(const SamplerConfig& config);

}  // namespace pocket
