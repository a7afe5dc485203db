// Fuzz target `tokenizer_llama2c`: a llama2.c tokenizer.bin (scores and pieces),
// then encode/decode of fuzzed text. The seeds (fuzz/corpus/tokenizer_llama2c) keep the
// mutations inside this format; the code path is the public loader of every format.
#include "tokenizer_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return pocket_fuzz::fuzz_tokenizer_file(data, size);
}
