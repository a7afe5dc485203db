#include "chat_template.h"

namespace pocket {

namespace {

struct NamedFormat {
  const char* name;
  ChatFormat format;
};

// The metadata name of each format (both directions: parse_chat_format, chat_format_name).
constexpr NamedFormat kFormats[] = {{"llama3", ChatFormat::Llama3}, {"chatml", ChatFormat::ChatML},
                                    {"llama2", ChatFormat::Llama2}, {"phi3", ChatFormat::Phi3},
                                    {"gemma", ChatFormat::Gemma}};

}  // namespace

ChatFormat parse_chat_format(const std::string& name) {
  for (const NamedFormat& f : kFormats)
    if (name == f.name) return f.format;
  return ChatFormat::None;
}

const char* chat_format_name(ChatFormat format) {
  for (const NamedFormat& f : kFormats)
    if (format == f.format) return f.name;
  return "none";
}

static std::string llama3(const std::string& system, const std::string& user, bool first) {
  auto header = [](const char* role) { return std::string("<|start_header_id|>") + role + "<|end_header_id|>\n\n"; };
  std::string s = first ? "<|begin_of_text|>" : "<|eot_id|>";
  if (first && !system.empty()) s += header("system") + system + "<|eot_id|>";
  return s + header("user") + user + "<|eot_id|>" + header("assistant");
}

static std::string chatml(const std::string& system, const std::string& user, bool first) {
  std::string s = first ? "" : "<|im_end|>\n";
  if (first && !system.empty()) s += "<|im_start|>system\n" + system + "<|im_end|>\n";
  return s + "<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n";
}

static std::string llama2(const std::string& system, const std::string& user, bool first) {
  std::string s = first ? "<s>[INST] " : " </s><s>[INST] ";
  if (first && !system.empty()) s += "<<SYS>>\n" + system + "\n<</SYS>>\n\n";
  return s + user + " [/INST]";
}

// Phi-3's: role tags on their own lines, each message closed by <|end|>; no BOS.
static std::string phi3(const std::string& system, const std::string& user, bool first) {
  std::string s = first ? "" : "<|end|>\n";
  if (first && !system.empty()) s += "<|system|>\n" + system + "<|end|>\n";
  return s + "<|user|>\n" + user + "<|end|>\n<|assistant|>\n";
}

// Gemma's: user and model turns, each closed by <end_of_turn>; no system role, so the system
// prompt opens the first user message (as Gemma's own template does it).
static std::string gemma(const std::string& system, const std::string& user, bool first) {
  std::string s = first ? "<bos>" : "<end_of_turn>\n";
  s += "<start_of_turn>user\n";
  if (first && !system.empty()) s += system + "\n\n";
  return s + user + "<end_of_turn>\n<start_of_turn>model\n";
}

std::string format_chat_turn(ChatFormat format, const std::string& system, const std::string& user, bool first) {
  switch (format) {
    case ChatFormat::Llama3: return llama3(system, user, first);
    case ChatFormat::ChatML: return chatml(system, user, first);
    case ChatFormat::Llama2: return llama2(system, user, first);
    case ChatFormat::Phi3: return phi3(system, user, first);
    case ChatFormat::Gemma: return gemma(system, user, first);
    case ChatFormat::None: break;
  }
  return first ? user : "\n" + user;
}

}  // namespace pocket
