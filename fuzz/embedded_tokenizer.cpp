// Fuzz target `embedded_tokenizer`: an LLM program whose tokenizer (and chat template, system
// prompt, eos ids, vocabulary size) travel inside the .pocket file, loaded the way an app
// loads it: Runner::load with no tokenizer path. The input is written to a memfd so the
// runner's own file/mmap path is the one fuzzed. A loaded runner then renders a chat turn
// and tokenizes it and fuzzed text.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "pocket/runner.h"
#include "tokenizer_fuzz.h"

using pocket::Error;
using pocket_fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int fd = memfd_create("pocket_fuzz", 0);
  check(fd >= 0, "memfd_create failed");
  check(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == static_cast<ssize_t>(size), "memfd write failed");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);

  std::unique_ptr<pocket::Runner> runner;
  std::string message;
  Error e = pocket::Runner::load(path, "", &runner, &message);
  check(e != Error::Internal, "Runner::load: internal error", message);
  check(e == Error::Ok || !message.empty(), "Runner::load failed without a message");
  if (e != Error::Ok) return 0;

  pocket::Tokenizer& tok = runner->tokenizer();
  check(static_cast<int64_t>(tok.vocab_size()) <= runner->vocab_size(), "tokenizer larger than the model's vocabulary");
  for (int32_t id : runner->eos_ids()) (void)tok.piece(id);
  (void)runner->chat_template();
  pocket_fuzz::exercise_tokenizer(tok, runner->format_chat_turn("Hello, who are you? 🙂"));
  pocket_fuzz::exercise_tokenizer(tok, runner->default_system_prompt());
  return 0;
}
