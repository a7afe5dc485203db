// pocket_llm.h over pocket::Runner.
#include <cstring>
#include <mutex>
#include <string>

#include "c_api_util.h"
#include "module.h"
#include "pocket/pocket_llm.h"
#include "pocket/runner.h"
#include "pocket/tokenizer.h"

using pocket::Error;
using pocket::detail::c_fail;
using pocket::detail::c_guarded;
using pocket::detail::c_ok;

struct pk_runner {
  std::unique_ptr<pocket::Runner> runner;
  // pk_runner_next's last piece. next_mutex covers writing it and reading its size: the
  // runner's own claim ends when Runner::next returns, and another thread's pull would
  // otherwise clear the string between the two.
  std::string piece;
  std::mutex next_mutex;
};

struct pk_generation_config {
  pocket::GenerationConfig config;
};

namespace {

pk_status null_arg(const char* what) { return c_fail(Error::InvalidArgument, std::string(what) + " is NULL"); }

const pocket::GenerationConfig& config_of(const pk_generation_config* c) {
  static const pocket::GenerationConfig defaults;
  return c ? c->config : defaults;
}

// Applies f to a copy of the config and keeps it only when the sampler settings stay valid:
// validate_sampler_config is the one check of every binding (the config was valid before, so
// what it names is the value just set).
template <typename F>
pk_status set(pk_generation_config* c, F&& f) {
  if (c == nullptr) return null_arg("config");
  pocket::GenerationConfig changed = c->config;
  f(changed);
  std::string bad = pocket::validate_sampler_config(changed.sampler);
  if (!bad.empty()) return c_fail(Error::InvalidArgument, bad);
  c->config = std::move(changed);
  return c_ok();
}

pk_status status_of(Error e, const std::string& message) { return e == Error::Ok ? c_ok() : c_fail(e, message); }

// Streams through a C callback; a nonzero return stops generation.
std::function<bool(const std::string&)> piece_sink(pk_piece_callback cb, void* user) {
  return [cb, user](const std::string& piece) { return cb == nullptr || cb(piece.data(), piece.size(), user) == 0; };
}

}  // namespace

extern "C" {

pk_status pk_generation_config_create(pk_generation_config** out) {
  return c_guarded([&] {
    if (out == nullptr) return null_arg("out");
    *out = new pk_generation_config();
    return c_ok();
  });
}

void pk_generation_config_destroy(pk_generation_config* c) { delete c; }

pk_status pk_generation_config_set_max_new_tokens(pk_generation_config* c, int32_t n) {
  if (n < 0) return c_fail(Error::InvalidArgument, "max_new_tokens must be >= 0, got " + std::to_string(n));
  return set(c, [n](pocket::GenerationConfig& g) { g.max_new_tokens = n; });
}
pk_status pk_generation_config_set_temperature(pk_generation_config* c, float t) {
  return set(c, [t](pocket::GenerationConfig& g) { g.sampler.temperature = t; });
}
pk_status pk_generation_config_set_top_k(pk_generation_config* c, int32_t k) {
  return set(c, [k](pocket::GenerationConfig& g) { g.sampler.top_k = k; });
}
pk_status pk_generation_config_set_top_p(pk_generation_config* c, float p) {
  return set(c, [p](pocket::GenerationConfig& g) { g.sampler.top_p = p; });
}
pk_status pk_generation_config_set_min_p(pk_generation_config* c, float p) {
  return set(c, [p](pocket::GenerationConfig& g) { g.sampler.min_p = p; });
}
pk_status pk_generation_config_set_repetition_penalty(pk_generation_config* c, float penalty) {
  return set(c, [penalty](pocket::GenerationConfig& g) { g.sampler.repetition_penalty = penalty; });
}
pk_status pk_generation_config_set_seed(pk_generation_config* c, uint64_t seed) {
  return set(c, [seed](pocket::GenerationConfig& g) { g.sampler.seed = seed; });
}
pk_status pk_generation_config_add_stop_string(pk_generation_config* c, const char* stop) {
  return c_guarded([&] {
    if (stop == nullptr || *stop == '\0') return c_fail(Error::InvalidArgument, "stop string is NULL or empty");
    return set(c, [stop](pocket::GenerationConfig& g) { g.stop_strings.emplace_back(stop); });
  });
}

pk_status pk_runner_create(const char* model_path, const char* tokenizer_path, pk_runner** out) {
  return c_guarded([&] {
    if (model_path == nullptr) return null_arg("model_path");
    if (out == nullptr) return null_arg("out");
    auto r = std::make_unique<pk_runner>();
    std::string message;
    Error e = pocket::Runner::load(model_path, tokenizer_path ? tokenizer_path : "", &r->runner, &message);
    if (e != Error::Ok) return c_fail(e, message);
    *out = r.release();
    return c_ok();
  });
}

void pk_runner_destroy(pk_runner* r) { delete r; }

pk_status pk_runner_set_num_threads(pk_runner* r, int n) {
  if (r == nullptr) return null_arg("runner");
  if (n < 0) return c_fail(Error::InvalidArgument, "num_threads must be >= 0");
  r->runner->set_num_threads(n);
  return c_ok();
}

pk_status pk_runner_set_memory_limit(pk_runner* r, uint64_t bytes) {
  if (r == nullptr) return null_arg("runner");
  r->runner->module().set_memory_limit(bytes);
  return c_ok();
}

pk_status pk_runner_generate(pk_runner* r, const char* prompt, const pk_generation_config* c, pk_piece_callback cb,
                             void* user) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (prompt == nullptr) return null_arg("prompt");
    std::string message;
    Error e = r->runner->generate(prompt, config_of(c), piece_sink(cb, user), &message);
    return e == Error::Ok ? c_ok() : c_fail(e, message);
  });
}

pk_status pk_runner_generate_ids(pk_runner* r, const int32_t* prompt, size_t n_prompt, const pk_generation_config* c,
                                 int32_t* out, size_t capacity, size_t* n_out) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (prompt == nullptr && n_prompt > 0) return null_arg("prompt");
    if ((out == nullptr && capacity > 0) || n_out == nullptr) return null_arg("out");
    pocket::GenerationConfig config = config_of(c);
    if (static_cast<size_t>(config.max_new_tokens) > capacity) config.max_new_tokens = static_cast<int32_t>(capacity);
    std::vector<int32_t> ids;
    std::string message;
    Error e = r->runner->generate_ids(std::vector<int32_t>(prompt, prompt + n_prompt), config, &ids, &message);
    if (e != Error::Ok) return c_fail(e, message);
    if (!ids.empty()) memcpy(out, ids.data(), ids.size() * sizeof(int32_t));
    *n_out = ids.size();
    return c_ok();
  });
}

pk_status pk_runner_chat(pk_runner* r, const char* message_text, const pk_generation_config* c, pk_piece_callback cb,
                         void* user) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (message_text == nullptr) return null_arg("message");
    std::string message;
    Error e = r->runner->chat(message_text, config_of(c), piece_sink(cb, user), &message);
    return e == Error::Ok ? c_ok() : c_fail(e, message);
  });
}

pk_status pk_runner_set_system_prompt(pk_runner* r, const char* system_prompt) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    std::string message;
    Error e = r->runner->set_system_prompt(system_prompt ? system_prompt : "", &message);
    return e == Error::Ok ? c_ok() : c_fail(e, message);
  });
}

pk_status pk_runner_reset(pk_runner* r) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    std::string message;
    Error e = r->runner->reset(&message);
    return e == Error::Ok ? c_ok() : c_fail(e, message);
  });
}

pk_status pk_runner_start(pk_runner* r, const char* prompt, const pk_generation_config* c, uint64_t* generation) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (prompt == nullptr) return null_arg("prompt");
    if (generation == nullptr) return null_arg("generation");
    std::string message;
    return status_of(r->runner->begin(prompt, config_of(c), generation, &message), message);
  });
}

pk_status pk_runner_start_chat(pk_runner* r, const char* message_text, const pk_generation_config* c,
                               uint64_t* generation) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (message_text == nullptr) return null_arg("message");
    if (generation == nullptr) return null_arg("generation");
    std::string message;
    return status_of(r->runner->begin_chat(message_text, config_of(c), generation, &message), message);
  });
}

pk_status pk_runner_next(pk_runner* r, uint64_t generation, const char** piece, size_t* size, int* done) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (piece == nullptr || size == nullptr || done == nullptr) return null_arg("piece/size/done");
    bool finished = false;
    std::string message;
    std::unique_lock<std::mutex> hold(r->next_mutex, std::try_to_lock);
    if (!hold.owns_lock())
      return c_fail(Error::Busy, "the runner is busy: next() was called while another call runs on it (a runner "
                                 "runs one call at a time; stop() ends a running generation)");
    Error e = r->runner->next(generation, &r->piece, &finished, &message);
    if (e != Error::Ok) return c_fail(e, message);
    *piece = r->piece.c_str();
    *size = r->piece.size();
    *done = finished ? 1 : 0;
    return c_ok();
  });
}

void pk_runner_stop(pk_runner* r) {
  if (r != nullptr) r->runner->stop();
}

pk_status pk_runner_stats(const pk_runner* r, double* load_ms, double* ttft_ms, double* prefill_tok_s,
                          double* decode_tok_s, int32_t* prompt_tokens, int32_t* generated_tokens) {
  if (r == nullptr) return null_arg("runner");
  const pocket::GenerationStats s = r->runner->stats();
  if (load_ms) *load_ms = s.load_ms;
  if (ttft_ms) *ttft_ms = s.ttft_ms;
  if (prefill_tok_s) *prefill_tok_s = s.prefill_tok_s;
  if (decode_tok_s) *decode_tok_s = s.decode_tok_s;
  if (prompt_tokens) *prompt_tokens = s.prompt_tokens;
  if (generated_tokens) *generated_tokens = s.generated_tokens;
  return c_ok();
}

const char* pk_runner_stop_reason(const pk_runner* r) { return r ? r->runner->stats().stop_reason : ""; }
int32_t pk_runner_max_seq_len(const pk_runner* r) { return r ? r->runner->max_seq_len() : 0; }
int32_t pk_runner_vocab_size(const pk_runner* r) { return r ? r->runner->vocab_size() : 0; }
int32_t pk_runner_position(const pk_runner* r) { return r ? r->runner->position() : 0; }

pk_status pk_runner_encode(pk_runner* r, const char* text, int add_bos, int32_t* ids, size_t capacity, size_t* n_out) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (text == nullptr) return null_arg("text");
    if (n_out == nullptr || (ids == nullptr && capacity > 0)) return null_arg("ids/n_out");
    std::vector<int32_t> out;
    std::string message;
    Error e = r->runner->tokenizer().encode(text, add_bos != 0, &out, &message);
    if (e != Error::Ok) return c_fail(e, message);
    if (out.size() > capacity) {
      *n_out = out.size();
      return c_fail(Error::OutOfRange, std::to_string(out.size()) + " ids do not fit a buffer of " + std::to_string(capacity));
    }
    if (!out.empty()) memcpy(ids, out.data(), out.size() * sizeof(int32_t));
    *n_out = out.size();
    return c_ok();
  });
}

pk_status pk_runner_decode(pk_runner* r, const int32_t* ids, size_t n_ids, char* text, size_t capacity, size_t* n_out) {
  return c_guarded([&] {
    if (r == nullptr) return null_arg("runner");
    if (ids == nullptr && n_ids > 0) return null_arg("ids");
    if (n_out == nullptr || (text == nullptr && capacity > 0)) return null_arg("text/n_out");
    std::string out;
    std::string message;
    Error e = r->runner->tokenizer().decode(ids, n_ids, pocket::DecodeOptions(), &out, &message);
    if (e != Error::Ok) return c_fail(e, message);
    if (out.size() + 1 > capacity) {
      *n_out = out.size();
      return c_fail(Error::OutOfRange, std::to_string(out.size() + 1) + " bytes do not fit a buffer of " +
                                           std::to_string(capacity));
    }
    memcpy(text, out.data(), out.size());
    text[out.size()] = '\0';
    *n_out = out.size();
    return c_ok();
  });
}

// ---------------------------------------------------------------- runner from a file region

pk_status pk_runner_create_fd(int fd, uint64_t offset, uint64_t length, const char* tokenizer_path, pk_runner** out) {
  return c_guarded([&] {
    if (out == nullptr) return null_arg("out");
    auto r = std::make_unique<pk_runner>();
    std::string message;
    Error e = pocket::Runner::load_fd(fd, offset, length, tokenizer_path ? tokenizer_path : "", &r->runner, &message);
    if (e != Error::Ok) return c_fail(e, message);
    *out = r.release();
    return c_ok();
  });
}

}  // extern "C"
