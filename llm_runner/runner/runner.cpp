// The runner: prefill, then forward -> sample -> decode -> callback.
#include "pocket/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "chat_template.h"
#include "module.h"
#include "pocket/tokenizer.h"
#include "text_stream.h"

namespace pocket {

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Tokens decoded before the new ones when streaming text: enough for the rules that look at
// neighbours (a SentencePiece start-of-text space, llama2.c's space after BOS) to see the same
// thing decoding the whole answer would, at a cost per token that does not grow with it.
constexpr size_t kDecodeContext = 8;

// Largest vocabulary a program may declare (real ones have up to ~256K tokens).
constexpr int64_t kMaxVocab = int64_t(1) << 24;

// Reads an integer metadata entry; false when absent or malformed.
bool metadata_int(const Program& p, const char* key, int64_t* out) {
  const char* v = p.metadata(key);
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  long long x = strtoll(v, &end, 10);
  if (*end != '\0') return false;
  *out = x;
  return true;
}

std::vector<int32_t> parse_ids(const char* text) {
  std::vector<int32_t> ids;
  for (const char* p = text; p && *p;) {
    char* end = nullptr;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    ids.push_back(static_cast<int32_t>(v));
    p = *end == ',' ? end + 1 : end;
  }
  return ids;
}

Error busy(const char* call, std::string* message) {
  *message = std::string("the runner is busy: ") + call +
             "() was called while another call runs on it (a runner runs one call at a time; "
             "stop() ends a running generation)";
  return Error::Busy;
}

}  // namespace

// Holds the runner for one call; meanwhile other threads' calls fail with Busy.
class Runner::Claim {
 public:
  explicit Claim(std::mutex& m) : lock_(m, std::try_to_lock) {}
  bool held() const { return lock_.owns_lock(); }

 private:
  std::unique_lock<std::mutex> lock_;
};

Runner::~Runner() = default;

Error Runner::load(const std::string& model_path, const std::string& tokenizer_path, std::unique_ptr<Runner>* out,
                   std::string* message) {
  double start = now_ms();
  std::unique_ptr<Module> module;
  Error e = Module::load_file(model_path, FileData::Mode::Mmap, &module, message);
  if (e != Error::Ok) return e;
  return init(std::move(module), "'" + model_path + "'", tokenizer_path, start, out, message);
}

Error Runner::load_fd(int fd, uint64_t offset, uint64_t length, const std::string& tokenizer_path,
                      std::unique_ptr<Runner>* out, std::string* message) {
  double start = now_ms();
  std::unique_ptr<Module> module;
  Error e = Module::load_fd(fd, offset, length, FileData::Mode::Mmap, &module, message);
  if (e != Error::Ok) return e;
  const std::string name = "fd " + std::to_string(fd) + ", offset " + std::to_string(offset);
  return init(std::move(module), name, tokenizer_path, start, out, message);
}

Error Runner::init(std::unique_ptr<Module> module, const std::string& name, const std::string& tokenizer_path,
                   double start, std::unique_ptr<Runner>* out, std::string* message) {
  std::unique_ptr<Runner> r(new Runner());
  r->module_ = std::move(module);
  Error e = Error::Ok;
  const Program& p = r->module_->program();
  int64_t max_seq = 0, vocab = 0;
  if (p.metadata("pocket_llm") == nullptr || p.find_method("prefill") < 0 || p.find_method("decode") < 0 ||
      !metadata_int(p, "max_seq_len", &max_seq) || !metadata_int(p, "vocab_size", &vocab)) {
    *message = name + " is not an LLM program (it needs prefill and decode methods and "
               "max_seq_len/vocab_size metadata; export it with `pocket llm export`)";
    return Error::InvalidArgument;
  }
  // Checked before logits_ (vocab floats) and positions are sized from them.
  if (vocab < 1 || vocab > kMaxVocab || max_seq < 1 || max_seq > INT32_MAX) {
    *message = name + ": metadata vocab_size " + std::to_string(vocab) + " or max_seq_len " + std::to_string(max_seq) +
               " is out of range (vocab_size 1.." + std::to_string(kMaxVocab) + ", max_seq_len >= 1)";
    return Error::InvalidProgram;
  }
  r->max_seq_len_ = static_cast<int32_t>(max_seq);
  r->vocab_size_ = static_cast<int32_t>(vocab);
  r->eos_ids_ = parse_ids(p.metadata("eos_ids"));
  r->chat_format_ = static_cast<int>(parse_chat_format(p.metadata("chat_template") ? p.metadata("chat_template") : ""));
  if (const char* system = p.metadata("default_system_prompt")) r->default_system_ = r->system_ = system;

  if (tokenizer_path.empty()) {
    Span<const uint8_t> embedded = p.tokenizer();
    if (embedded.empty()) {
      *message = name + " has no embedded tokenizer; pass a tokenizer path";
      return Error::NotFound;
    }
    e = Tokenizer::load_bytes(std::string(reinterpret_cast<const char*>(embedded.data), embedded.size),
                              &r->tokenizer_, message);
  } else {
    e = Tokenizer::load(tokenizer_path, &r->tokenizer_, message);
  }
  if (e != Error::Ok) return e;
  if (static_cast<int64_t>(r->tokenizer_->vocab_size()) > vocab) {
    *message = "tokenizer has " + std::to_string(r->tokenizer_->vocab_size()) + " tokens but the model's vocabulary has " +
               std::to_string(vocab) + ": they do not belong together";
    return Error::InvalidArgument;
  }
  for (int32_t id : r->tokenizer_->eos_ids())  // e.g. <|eot_id|> besides <|end_of_text|>
    if (std::find(r->eos_ids_.begin(), r->eos_ids_.end(), id) == r->eos_ids_.end()) r->eos_ids_.push_back(id);
  r->logits_.resize(static_cast<size_t>(vocab));
  r->stats_.load_ms = now_ms() - start;
  r->publish_stats();
  *out = std::move(r);
  return Error::Ok;
}

bool Runner::is_eos(int32_t token) const {
  return std::find(eos_ids_.begin(), eos_ids_.end(), token) != eos_ids_.end();
}

void Runner::publish_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  published_ = stats_;
}

GenerationStats Runner::stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return published_;
}

void Runner::set_num_threads(int n) { module_->set_num_threads(n); }

Error Runner::reset(std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("reset", message);
  ++generation_;  // a step-wise generation cannot go on from an emptied cache
  pos_ = 0;
  chat_started_ = false;
  return Error::Ok;
}

Error Runner::set_system_prompt(const std::string& system, std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("set_system_prompt", message);
  system_ = system;
  return Error::Ok;
}

std::string Runner::system_prompt() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return system_;
}

// Runs `tokens` at the current position (prefill for several, decode for one) and keeps
// the logits of the last one.
Error Runner::forward(const std::vector<int32_t>& tokens, std::string* message) {
  const int32_t n = static_cast<int32_t>(tokens.size());
  if (pos_ + n > max_seq_len_) {
    *message = "context overflow: " + std::to_string(n) + " tokens at position " + std::to_string(pos_.load()) +
               " do not fit the model's context of " + std::to_string(max_seq_len_) +
               " tokens (reset the conversation or shorten the prompt)";
    return Error::OutOfRange;
  }
  std::vector<int64_t> ids(tokens.begin(), tokens.end());
  int64_t position = pos_;
  Tensor inputs[2];
  inputs[0].dtype = ScalarType::Int64;
  inputs[0].dim = 2;
  inputs[0].sizes[0] = 1;
  inputs[0].sizes[1] = n;
  inputs[0].set_contiguous_strides();
  inputs[0].data = ids.data();
  inputs[0].capacity = ids.size() * sizeof(int64_t);
  inputs[1].dtype = ScalarType::Int64;
  inputs[1].dim = 1;
  inputs[1].sizes[0] = 1;
  inputs[1].set_contiguous_strides();
  inputs[1].data = &position;
  inputs[1].capacity = sizeof position;
  bool logits = false;
  Error e = module_->execute(n == 1 ? "decode" : "prefill", inputs, 2, [&](const Method& m) {
    const Value& out = m.output(0);
    logits = m.num_outputs() > 0 && out.is_tensor() && out.tensor.dtype == ScalarType::Float32 &&
             out.tensor.numel() == vocab_size_;
    if (logits) memcpy(logits_.data(), out.tensor.data, logits_.size() * sizeof(float));
  }, message);
  if (e != Error::Ok) return e;
  if (!logits) {
    *message = "the model's output is not float32 logits over its vocabulary of " + std::to_string(vocab_size_);
    return Error::InvalidProgram;
  }
  pos_ += n;
  return Error::Ok;
}

Error Runner::start(const std::vector<int32_t>& prompt, const GenerationConfig& config, std::string* message) {
  ++generation_;
  next_token_ = -1;
  std::string bad = validate_sampler_config(config.sampler);
  if (!bad.empty()) {
    *message = bad;
    return Error::InvalidArgument;
  }
  if (prompt.empty()) {
    *message = "the prompt has no tokens";
    return Error::InvalidArgument;
  }
  for (int32_t id : prompt)
    if (id < 0 || id >= vocab_size_) {
      *message = "prompt token " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(vocab_size_);
      return Error::InvalidArgument;
    }
  config_ = config;
  sampler_ = make_sampler(config.sampler);
  stream_ = std::make_unique<TextStream>(config.stop_strings);
  generated_.clear();
  decoded_ = 0;
  const double load_ms = stats_.load_ms;
  stats_ = GenerationStats();
  stats_.load_ms = load_ms;
  stats_.prompt_tokens = static_cast<int32_t>(prompt.size());
  stop_requested_ = false;
  decode_ms_ = 0;
  double start = now_ms();
  Error e = forward(prompt, message);
  if (e != Error::Ok) return e;
  next_token_ = sampler_->sample(logits_.data(), logits_.size());
  stats_.ttft_ms = now_ms() - start;
  stats_.prefill_tok_s = prompt.size() / (stats_.ttft_ms / 1e3);
  publish_stats();
  return Error::Ok;
}

Error Runner::step(int32_t* token, std::string* piece, bool* done, std::string* message) {
  piece->clear();
  *done = false;
  *token = -1;
  if (stats_.stop_reason[0] != '\0' || next_token_ < 0) {
    *done = true;
    return Error::Ok;
  }
  auto finish = [&](const char* reason) {
    stats_.stop_reason = reason;
    publish_stats();
    *piece += stream_->finish();
    *done = true;
    next_token_ = -1;
    return Error::Ok;
  };
  if (stop_requested_) return finish("cancelled");
  if (is_eos(next_token_)) return finish("eos");
  if (static_cast<int32_t>(generated_.size()) >= config_.max_new_tokens) return finish("max_new_tokens");
  const int32_t t = next_token_;
  *token = t;
  generated_.push_back(t);
  stats_.generated_tokens = static_cast<int32_t>(generated_.size());
  bool stopped = false;
  *piece = stream_->push(decode_new(), &stopped);
  if (stopped) return finish("stop_string");
  // The token is fed even when it is the last one wanted, so a chat's cache holds the
  // whole reply.
  if (pos_ >= max_seq_len_) return finish("context_full");
  double start = now_ms();
  Error e = forward({t}, message);
  if (e != Error::Ok) return e;
  next_token_ = sampler_->sample(logits_.data(), logits_.size());
  decode_ms_ += now_ms() - start;
  stats_.decode_tok_s = decode_ms_ > 0 ? generated_.size() / (decode_ms_ / 1e3) : 0;
  publish_stats();
  return Error::Ok;
}

// The bytes the tokens of generated_ not yet decoded add to the text: a window of them and
// up to kDecodeContext tokens before, minus the decoding of those alone. Tokenizers whose
// decoding of earlier bytes changes with what follows (a whole-output strip) hold the bytes
// back until it stops changing, as decoding everything each time would.
std::string Runner::decode_new() {
  const size_t from = decoded_ > kDecodeContext ? decoded_ - kDecodeContext : 0;
  const auto first = generated_.begin() + static_cast<std::ptrdiff_t>(from);
  const std::string before = tokenizer_->decode(std::vector<int32_t>(first, first + (decoded_ - from)));
  const std::string text = tokenizer_->decode(std::vector<int32_t>(first, generated_.end()));
  if (text.size() < before.size() || text.compare(0, before.size(), before) != 0) return "";
  decoded_ = generated_.size();
  return text.substr(before.size());
}

// Steps until a token completes some text or the generation ends (*done, *piece empty); the
// tokens go to *tokens when it is not null.
Error Runner::pull(std::vector<int32_t>* tokens, std::string* piece, bool* done, std::string* message) {
  piece->clear();
  std::string text;
  for (;;) {
    int32_t token;
    Error e = step(&token, &text, done, message);
    if (e != Error::Ok) return e;
    if (tokens != nullptr && token >= 0) tokens->push_back(token);
    if (!text.empty()) {  // the last text comes on its own; the next pull then says done
      *piece = std::move(text);
      *done = false;
      return Error::Ok;
    }
    if (*done) return Error::Ok;
  }
}

// Pulls the generation start() began (with result `e`) to its end, pushing text to on_piece.
Error Runner::stream(const std::function<bool(const std::string&)>& on_piece, Error e, std::string* message) {
  std::string piece;
  for (bool done = false; e == Error::Ok && !done;) {
    e = pull(nullptr, &piece, &done, message);
    if (e == Error::Ok && !done && !on_piece(piece)) stop();
  }
  return e;
}

Error Runner::begin(const std::string& prompt, const GenerationConfig& config, uint64_t* id, std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("begin", message);
  Error e = start_text(prompt, config, message);
  *id = generation_;
  return e;
}

Error Runner::begin_chat(const std::string& user, const GenerationConfig& config, uint64_t* id,
                         std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("begin_chat", message);
  Error e = start_chat(user, config, message);
  *id = generation_;
  return e;
}

Error Runner::next(uint64_t id, std::string* piece, bool* done, std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("next", message);
  if (id != generation_) {
    *message = "this generation was superseded: a later begin, generate, chat or reset on the same runner "
               "replaced it";
    return Error::Cancelled;
  }
  return pull(nullptr, piece, done, message);
}

Error Runner::generate_ids(const std::vector<int32_t>& prompt, const GenerationConfig& config, std::vector<int32_t>* out,
                           std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("generate_ids", message);
  pos_ = 0;
  chat_started_ = false;
  Error e = start(prompt, config, message);
  std::string piece;
  for (bool done = false; e == Error::Ok && !done;) e = pull(out, &piece, &done, message);
  return e;
}

Error Runner::start_text(const std::string& prompt, const GenerationConfig& config, std::string* message) {
  ++generation_;  // also when encoding fails: a pulled generation cannot go on from a reset cache
  next_token_ = -1;
  pos_ = 0;
  chat_started_ = false;
  std::vector<int32_t> ids;
  Error e = tokenizer_->encode(prompt, true, &ids, message);
  if (e != Error::Ok) return e;
  return start(ids, config, message);
}

Error Runner::generate(const std::string& prompt, const GenerationConfig& config,
                       const std::function<bool(const std::string&)>& on_piece, std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("generate", message);
  return stream(on_piece, start_text(prompt, config, message), message);
}

std::string Runner::format_chat_turn(const std::string& user) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pocket::format_chat_turn(static_cast<ChatFormat>(chat_format_), system_, user, !chat_started_ || pos_ == 0);
}

std::string Runner::chat_template() const { return chat_format_name(static_cast<ChatFormat>(chat_format_)); }

Error Runner::start_chat(const std::string& user, const GenerationConfig& config, std::string* message) {
  ChatFormat format = static_cast<ChatFormat>(chat_format_);
  const std::string turn = pocket::format_chat_turn(format, system_, user, !chat_started_ || pos_ == 0);
  std::vector<int32_t> ids;
  // The templates spell out BOS where their family wants it.
  Error e = tokenizer_->encode(turn, format == ChatFormat::None && pos_ == 0, &ids, message);
  if (e != Error::Ok) return e;
  chat_started_ = true;
  return start(ids, config, message);
}

Error Runner::chat(const std::string& user, const GenerationConfig& config,
                   const std::function<bool(const std::string&)>& on_piece, std::string* message) {
  Claim claim(mutex_);
  if (!claim.held()) return busy("chat", message);
  return stream(on_piece, start_chat(user, config, message), message);
}

}  // namespace pocket
