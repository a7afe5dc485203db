#include "tokenizer/tokenizer_impl.h"

namespace pocket {
namespace detail {

void Vocab::resize(size_t n) {
  text.resize(n);
  piece.resize(n);
  special.resize(n, 0);
}

void Vocab::set(int32_t id, std::string token_text, std::string token_piece, bool is_special) {
  ids.emplace(token_text, id);
  text[id] = std::move(token_text);
  piece[id] = std::move(token_piece);
  special[id] = is_special ? 1 : 0;
}

int32_t Vocab::find(const std::string& token_text) const {
  auto it = ids.find(token_text);
  return it == ids.end() ? -1 : it->second;
}

void Vocab::guess_bos_eos() {
  auto special_id = [&](const char* name) {
    int32_t id = find(name);
    return id >= 0 && special[id] ? id : -1;
  };
  if (bos < 0) {
    for (const char* name : {"<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"})
      if ((bos = special_id(name)) >= 0) break;
  }
  if (eos.empty()) {
    for (const char* name : {"<|end_of_text|>", "</s>", "<eos>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>",
                             "<|im_end|>", "<end_of_turn>", "<|end|>"}) {
      int32_t id = special_id(name);
      if (id >= 0 && id != bos) eos.push_back(id);
    }
  }
}

void TokenizerImpl::decode(const int32_t* ids, size_t n, bool skip_special, std::string* out) const {
  for (size_t i = 0; i < n; ++i)
    if (!skip_special || !vocab.special[ids[i]]) *out += vocab.piece[ids[i]];
}

}  // namespace detail
}  // namespace pocket
