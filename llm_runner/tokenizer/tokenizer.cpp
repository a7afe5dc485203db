// pocket::Tokenizer: the loader that tells formats apart, and the checks and exception guards
// around the format-specific TokenizerImpl.
#include "pocket/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>

#include "tokenizer/tokenizer_impl.h"

namespace pocket {
namespace {

const std::string kEmpty;

// Runs f, turning an escaping exception into an error (no exception leaves the API).
template <typename F>
Error guarded(std::string* message, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    if (message) *message = "tokenizer: out of memory";
    return Error::OutOfMemory;
  } catch (...) {
    if (message) *message = "tokenizer: internal error";
    return Error::Internal;
  }
}

bool starts_with(const char* data, size_t size, const char* prefix) {
  size_t n = std::strlen(prefix);
  return size >= n && std::memcmp(data, prefix, n) == 0;
}

bool contains(const char* data, size_t size, const std::string& needle) {
  return std::string_view(data, size).find(needle) != std::string_view::npos;
}

Error detect_and_load(const char* data, size_t size, std::unique_ptr<detail::TokenizerImpl>* out,
                      std::string* message) {
  size_t i = starts_with(data, size, "\xEF\xBB\xBF") ? 3 : 0;  // UTF-8 byte order mark
  while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) ++i;
  if (size == 0) {
    *message = "not a tokenizer file: it is empty";
    return Error::InvalidArgument;
  }
  if (starts_with(data, size, "POCKETPG")) {
    *message = "not a tokenizer file: this is a .pocket program (load its embedded tokenizer "
               "through the runner, or pass tokenizer.json / tokenizer.model)";
    return Error::InvalidArgument;
  }
  if (starts_with(data, size, "GGUF")) {
    *message = "not a tokenizer file: this is a GGUF model; export it to .pocket (which embeds its "
               "tokenizer) or pass its tokenizer.json";
    return Error::InvalidArgument;
  }
  if (i < size && data[i] == '{') return detail::load_hf_json(data + i, size - i, out, message);
  if (detail::looks_like_tiktoken(data, size)) return detail::load_tiktoken(data, size, out, message);
  if (detail::looks_like_llama2c(data, size)) return detail::load_llama2c(data, size, out, message);
  if (size > 8 && data[0] == 0x0A && contains(data, std::min<size_t>(size, 64), "<unk>")) {
    *message = "not a supported tokenizer file: this looks like a SentencePiece .model (protobuf); "
               "use the model's tokenizer.json instead";
    return Error::Unsupported;
  }
  *message = "not a tokenizer file (expected a Hugging Face tokenizer.json, a tiktoken file or a "
             "llama2.c tokenizer.bin)";
  return Error::InvalidArgument;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<detail::TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Error Tokenizer::load_buffer(const void* data, size_t size, std::unique_ptr<Tokenizer>* out,
                             std::string* message) {
  return guarded(message, [&] {
    std::unique_ptr<detail::TokenizerImpl> impl;
    Error e = detect_and_load(static_cast<const char*>(data), size, &impl, message);
    if (e != Error::Ok) return e;
    out->reset(new Tokenizer(std::move(impl)));
    return Error::Ok;
  });
}

Error Tokenizer::load(const std::string& path, std::unique_ptr<Tokenizer>* out, std::string* message) {
  return guarded(message, [&] {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      *message = "cannot open tokenizer file '" + path + "'";
      return Error::NotFound;
    }
    std::string bytes;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) {
      *message = "error reading tokenizer file '" + path + "'";
      return Error::Io;
    }
    Error e = load_buffer(bytes.data(), bytes.size(), out, message);
    if (e != Error::Ok) *message += " (file '" + path + "')";
    return e;
  });
}

Error Tokenizer::encode(const std::string& text, const EncodeOptions& options, std::vector<int32_t>* out,
                        std::string* message) const {
  return guarded(message, [&] {
    if (options.add_bos && impl_->vocab.bos >= 0) out->push_back(impl_->vocab.bos);
    return impl_->encode(text, options.parse_special, out, message);
  });
}

Error Tokenizer::decode(const int32_t* ids, size_t n, const DecodeOptions& options, std::string* out,
                        std::string* message) const {
  return guarded(message, [&] {
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= vocab_size()) {
        *message = "decode: token id " + std::to_string(ids[i]) + " (at " + std::to_string(i) +
                   ") is outside the vocabulary [0, " + std::to_string(vocab_size()) + ")";
        return Error::OutOfRange;
      }
    }
    impl_->decode(ids, n, options.skip_special, out);
    return Error::Ok;
  });
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  guarded(nullptr, [&] {
    std::vector<int32_t> known;
    known.reserve(ids.size());
    for (int32_t id : ids)
      if (id >= 0 && static_cast<size_t>(id) < vocab_size()) known.push_back(id);
    impl_->decode(known.data(), known.size(), false, &text);
    return Error::Ok;
  });
  return text;
}

const std::string& Tokenizer::piece(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < vocab_size() ? impl_->vocab.piece[id] : kEmpty;
}

size_t Tokenizer::vocab_size() const { return impl_->vocab.text.size(); }
int32_t Tokenizer::bos_id() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos_id() const { return impl_->vocab.eos.empty() ? -1 : impl_->vocab.eos[0]; }
const std::vector<int32_t>& Tokenizer::eos_ids() const { return impl_->vocab.eos; }

bool Tokenizer::is_eos(int32_t id) const {
  const std::vector<int32_t>& eos = impl_->vocab.eos;
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < vocab_size() && impl_->vocab.special[id];
}

int32_t Tokenizer::token_id(const std::string& token) const { return impl_->vocab.find(token); }

const std::string& Tokenizer::token_text(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < vocab_size() ? impl_->vocab.text[id] : kEmpty;
}

Error Tokenizer::set_bos_id(int32_t id, std::string* message) {
  if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= vocab_size())) {
    *message = "set_bos_id: " + std::to_string(id) + " is outside the vocabulary";
    return Error::OutOfRange;
  }
  impl_->vocab.bos = id;
  return Error::Ok;
}

Error Tokenizer::set_eos_ids(const std::vector<int32_t>& ids, std::string* message) {
  return guarded(message, [&] {
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= vocab_size()) {
        *message = "set_eos_ids: " + std::to_string(id) + " is outside the vocabulary";
        return Error::OutOfRange;
      }
    }
    impl_->vocab.eos = ids;
    return Error::Ok;
  });
}

Tokenizer::Format Tokenizer::format() const { return impl_->format(); }
const char* Tokenizer::format_name() const { return impl_->format_name(); }

}  // namespace pocket
