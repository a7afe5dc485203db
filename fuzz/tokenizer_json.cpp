// Fuzz target `tokenizer_json`: a Hugging Face tokenizer.json (byte-level and
// SentencePiece-style BPE; a SentencePiece .model protobuf is refused by the same loader),
// then encode/decode of fuzzed text. The seeds (fuzz/corpus/tokenizer_json) keep the
// mutations inside this format; the code path is the public loader of every format.
#include "tokenizer_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return pocket_fuzz::fuzz_tokenizer_file(data, size);
}
