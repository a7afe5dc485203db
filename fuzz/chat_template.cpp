// Fuzz target `chat_template`: chat turn rendering (llm_runner/runner/chat_template.cpp) with
// a fuzzed template name, system prompt and user message, then tokenization of the rendered
// turn with the golden tiny LLM's ChatML tokenizer, where text that spells special tokens
// ("<|im_end|>") must stay safe.
//
// Input layout: [flags byte: bit 0 = first turn][template name]\0[system]\0[user].
#include <string>

#include "runner/chat_template.h"
#include "tokenizer_fuzz.h"

namespace {

using pocket_fuzz::check;

const pocket::Tokenizer& tokenizer() {
  static std::unique_ptr<pocket::Tokenizer> tok = [] {
    std::string bytes = pocket_fuzz::read_fixture(POCKET_SOURCE_DIR "/tests/golden/tiny_llm.tokenizer.json");
    std::unique_ptr<pocket::Tokenizer> t;
    std::string message;
    check(pocket::Tokenizer::load_bytes(bytes, &t, &message) == pocket::Error::Ok, "fixture tokenizer", message);
    return t;
  }();
  return *tok;
}

std::string next_field(const std::string& s, size_t* pos) {
  size_t end = s.find('\0', *pos);
  if (end == std::string::npos) end = s.size();
  std::string field = s.substr(*pos, end - *pos);
  *pos = end < s.size() ? end + 1 : end;
  return field;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > pocket_fuzz::kMaxText) return 0;
  const bool first = data[0] & 1;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t pos = 0;
  const std::string name = next_field(rest, &pos);
  const std::string system = next_field(rest, &pos);
  const std::string user = rest.substr(pos);

  const pocket::ChatFormat format = pocket::parse_chat_format(name);
  const std::string turn = pocket::format_chat_turn(format, system, user, first);
  check(turn.find(user) != std::string::npos, "the rendered turn lost the user message");
  if (format != pocket::ChatFormat::None && first)
    check(turn.find(system) != std::string::npos, "the rendered first turn lost the system prompt");
  pocket_fuzz::exercise_tokenizer(tokenizer(), turn);
  return 0;
}
