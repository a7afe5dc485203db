// Chat prompt formats for the model families Pocket knows, chosen from program metadata
// ("chat_template": llama3, chatml, llama2, phi3 or gemma).
#pragma once

#include <string>

namespace pocket {

enum class ChatFormat { None, Llama3, ChatML, Llama2, Phi3, Gemma };

// Parses a metadata value; unknown names give ChatFormat::None.
ChatFormat parse_chat_format(const std::string& name);
// The metadata name of a format ("none" for ChatFormat::None): parse_chat_format's inverse.
const char* chat_format_name(ChatFormat format);

// The text of one user turn, ready to be tokenized and followed by the assistant's reply.
// `first` starts the conversation (with the system prompt, if any); later turns first close
// the previous reply (whose end-of-turn token was sampled but not fed to the model).
std::string format_chat_turn(ChatFormat format, const std::string& system, const std::string& user, bool first);

}  // namespace pocket
