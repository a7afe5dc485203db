// The LLM runner: a .pocket program with `prefill` and `decode` methods, a tokenizer and a
// sampler. generate() reads top to bottom: prefill the prompt, then forward -> sample ->
// decode -> callback until an end token, a stop string, max_new_tokens or a full context.
//
//   std::unique_ptr<pocket::Runner> runner;
//   std::string err;
//   if (pocket::Runner::load("smol.pocket", "", &runner, &err) != pocket::Error::Ok) { ... }
//   pocket::GenerationConfig config;
//   config.max_new_tokens = 64;
//   runner->generate("Once upon a time", config,
//                    [](const std::string& piece) { fputs(piece.c_str(), stdout); return true; }, &err);
//
// Threads: a Runner runs one call at a time. generate(), generate_ids(), chat(), begin(),
// begin_chat(), next(), reset() and set_system_prompt() fail with Error::Busy while another
// thread is inside one of them (or when called from an on_piece callback). A pulled
// generation (begin() ... next()) is identified by the id begin() returns; a later begin(),
// generate(), chat() or reset() supersedes it, and next() with its id then fails with
// Error::Cancelled. Any thread may call stop(), stats(), position(), set_num_threads() and the
// const getters at any time. A Runner must outlive every call on it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pocket/error.h"
#include "pocket/sampler.h"

namespace pocket {

class Module;
class Method;
class Tokenizer;
class TextStream;

struct GenerationConfig {
  int32_t max_new_tokens = 256;
  SamplerConfig sampler;                  // temperature 0 (greedy) by default
  std::vector<std::string> stop_strings;  // generation ends before any of these
};

struct GenerationStats {
  double load_ms = 0;
  double ttft_ms = 0;         // time to first token, prefill included
  double prefill_tok_s = 0;
  double decode_tok_s = 0;
  int32_t prompt_tokens = 0;
  int32_t generated_tokens = 0;
  // "eos", "stop_string", "max_new_tokens", "context_full", "cancelled" or "" (running);
  // static storage
  const char* stop_reason = "";
};

class Runner {
 public:
  // Loads the program and its tokenizer: `tokenizer_path`, or the one embedded in the
  // program when the path is empty. Checks that the program is an LLM program and that
  // the tokenizer fits its vocabulary.
  static Error load(const std::string& model_path, const std::string& tokenizer_path,
                    std::unique_ptr<Runner>* out, std::string* message);
  // The same for a program in the `length` bytes of `fd` (borrowed for the call) at `offset`,
  // e.g. inside an APK, mapped in place when possible (see Module::load_fd).
  static Error load_fd(int fd, uint64_t offset, uint64_t length, const std::string& tokenizer_path,
                       std::unique_ptr<Runner>* out, std::string* message);
  ~Runner();

  // Streams the continuation of `prompt`, starting a new text (the cache is reset; chat()
  // is the way to continue a conversation). BOS is added when the tokenizer has one.
  // on_piece returns false to stop early. Text pieces never split a UTF-8 character.
  Error generate(const std::string& prompt, const GenerationConfig& config,
                 const std::function<bool(const std::string&)>& on_piece, std::string* message);
  // The same on token ids, used as given (no BOS added); generated ids are appended to *out.
  Error generate_ids(const std::vector<int32_t>& prompt, const GenerationConfig& config,
                     std::vector<int32_t>* out, std::string* message);
  // One chat turn: formats `user` with the program's chat template (and the system prompt
  // on the first turn); earlier turns stay in the KV cache.
  Error chat(const std::string& user, const GenerationConfig& config,
             const std::function<bool(const std::string&)>& on_piece, std::string* message);

  // Pulled generation, what generate() and chat() are made of and what pocket_llm.h's
  // pk_runner_start/pk_runner_next and the bindings' streams use. begin() starts a new text
  // from `prompt` as generate() does (cache reset, BOS added), prefills, and sets *id.
  Error begin(const std::string& prompt, const GenerationConfig& config, uint64_t* id, std::string* message);
  // begin() for one chat turn, as chat() does (earlier turns stay in the cache).
  Error begin_chat(const std::string& user, const GenerationConfig& config, uint64_t* id, std::string* message);
  // The next piece of text of generation `id`: runs tokens until one completes some text
  // (*piece non-empty, *done false) or the generation ends (*piece empty, *done true; its
  // stop reason is in stats()). Error::Cancelled when a later generation superseded `id`.
  Error next(uint64_t id, std::string* piece, bool* done, std::string* message);

  // The token ids chat() would feed for `user`: the turn formatted with the chat template.
  std::string format_chat_turn(const std::string& user) const;
  // "llama3", "chatml", "llama2", "phi3", "gemma" or "none" (from the program's metadata).
  std::string chat_template() const;

  // The system prompt of the next first chat turn; starts as the model's default (from its
  // chat template, e.g. SmolLM2 names itself). "" for none.
  Error set_system_prompt(const std::string& system, std::string* message);
  std::string system_prompt() const;
  const std::string& default_system_prompt() const { return default_system_; }
  // Forgets the conversation: the next prompt starts at position 0.
  Error reset(std::string* message);
  // Asks the running generation to end after the current token, with stop reason "cancelled"
  // (any thread; a no-op when none runs).
  void stop() { stop_requested_ = true; }
  // Kernel threads (see Module::set_num_threads); any time, from the next forward pass on.
  void set_num_threads(int n);

  // Statistics of the running or last generation (a copy, consistent).
  GenerationStats stats() const;
  int32_t position() const { return pos_; }
  int32_t max_seq_len() const { return max_seq_len_; }
  int32_t vocab_size() const { return vocab_size_; }
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  Tokenizer& tokenizer() { return *tokenizer_; }
  Module& module() { return *module_; }

 private:
  Runner() = default;
  // Checks that `module` holds an LLM program and loads its tokenizer; `name` names it in messages.
  static Error init(std::unique_ptr<Module> module, const std::string& name, const std::string& tokenizer_path,
                    double start_ms, std::unique_ptr<Runner>* out, std::string* message);
  // Holds the runner for one call, or fails with Busy naming `what`.
  class Claim;

  // The call bodies; the caller holds a Claim.
  Error start(const std::vector<int32_t>& prompt, const GenerationConfig& config, std::string* message);
  Error start_text(const std::string& prompt, const GenerationConfig& config, std::string* message);
  Error start_chat(const std::string& user, const GenerationConfig& config, std::string* message);
  // The generation loop, written once: one token per step, pieces of text until the end.
  Error step(int32_t* token, std::string* piece, bool* done, std::string* message);
  Error pull(std::vector<int32_t>* tokens, std::string* piece, bool* done, std::string* message);
  Error stream(const std::function<bool(const std::string&)>& on_piece, Error e, std::string* message);
  std::string decode_new();
  void publish_stats();

  Error forward(const std::vector<int32_t>& tokens, std::string* message);
  bool is_eos(int32_t token) const;

  std::unique_ptr<Module> module_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<SamplerChain> sampler_;
  std::unique_ptr<TextStream> stream_;
  std::vector<float> logits_;
  std::vector<int32_t> eos_ids_;
  std::vector<int32_t> generated_;
  size_t decoded_ = 0;  // tokens of generated_ whose bytes went to the stream
  std::string system_;
  std::string default_system_;
  GenerationConfig config_;
  GenerationStats stats_;
  mutable std::mutex mutex_;        // held by the call that uses the state (Claim)
  mutable std::mutex stats_mutex_;  // guards published_
  GenerationStats published_;       // what stats() returns
  uint64_t generation_ = 0;         // id of the current step-wise generation
  std::atomic<int32_t> pos_{0};
  int32_t max_seq_len_ = 0;
  int32_t vocab_size_ = 0;
  int32_t next_token_ = -1;
  bool chat_started_ = false;
  int chat_format_ = 0;
  double decode_ms_ = 0;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace pocket
