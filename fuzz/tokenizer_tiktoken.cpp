// Fuzz target `tokenizer_tiktoken`: a tiktoken file ("base64-token rank" lines),
// then encode/decode of fuzzed text. The seeds (fuzz/corpus/tokenizer_tiktoken) keep the
// mutations inside this format; the code path is the public loader of every format.
#include "tokenizer_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return pocket_fuzz::fuzz_tokenizer_file(data, size);
}
