// Fuzz target `generation_config`: sampler parameters and generation calls through the C API
// of pocket_llm.h, as a binding would make them, on the golden tiny LLM (tests/golden). Every
// setter gets raw values (NaN, infinities, negatives, huge counts); then one call runs:
// generate, generate_ids, chat, encode or decode with fuzzed text, ids and capacities.
// Every call must return a status (with a message when it fails), never crash or write
// past a caller's buffer.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pocket/pocket_llm.h"

namespace {

using pocket_fuzz::check;

// At most this many tokens per call: the point is the parameters, not long generations.
constexpr int32_t kMaxNewTokens = 4;

pk_runner* runner() {
  static pk_runner* r = [] {
    pk_runner* out = nullptr;
    pk_status s = pk_runner_create(POCKET_SOURCE_DIR "/tests/golden/tiny_llm.pocket",
                                   POCKET_SOURCE_DIR "/tests/golden/tiny_llm.tokenizer.json", &out);
    check(s == PK_STATUS_OK, "cannot load the golden tiny LLM", pk_last_error());
    return out;
  }();
  return r;
}

void check_status(pk_status s, const char* call) {
  check(s != PK_STATUS_INTERNAL, call, pk_last_error());
  check(s == PK_STATUS_OK || pk_last_error()[0] != '\0', "failure without a message", call);
}

// Raw bit patterns half of the time (NaN, inf, denormals), plain values otherwise.
float any_float(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) {
    uint32_t bits = in.ConsumeIntegral<uint32_t>();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  return in.ConsumeFloatingPointInRange<float>(-2.0f, 4.0f);
}

int on_piece(const char* piece, size_t size, void* user) {
  check(piece != nullptr || size == 0, "NULL piece");
  volatile char last = size ? piece[size - 1] : 0;  // ASan checks the read
  (void)last;
  return --*static_cast<int*>(user) <= 0;  // stops after a fuzzed number of pieces
}

void configure(FuzzedDataProvider& in, pk_generation_config* c) {
  check_status(pk_generation_config_set_max_new_tokens(c, in.ConsumeIntegralInRange<int32_t>(-2, kMaxNewTokens)),
               "set_max_new_tokens");
  if (in.ConsumeBool()) check_status(pk_generation_config_set_temperature(c, any_float(in)), "set_temperature");
  if (in.ConsumeBool()) check_status(pk_generation_config_set_top_k(c, in.ConsumeIntegral<int32_t>()), "set_top_k");
  if (in.ConsumeBool()) check_status(pk_generation_config_set_top_p(c, any_float(in)), "set_top_p");
  if (in.ConsumeBool()) check_status(pk_generation_config_set_min_p(c, any_float(in)), "set_min_p");
  if (in.ConsumeBool())
    check_status(pk_generation_config_set_repetition_penalty(c, any_float(in)), "set_repetition_penalty");
  check_status(pk_generation_config_set_seed(c, in.ConsumeIntegral<uint64_t>()), "set_seed");
  for (int n = in.ConsumeIntegralInRange(0, 3); n > 0; --n)
    check_status(pk_generation_config_add_stop_string(c, in.ConsumeRandomLengthString(16).c_str()), "add_stop_string");
}

void call(FuzzedDataProvider& in, pk_runner* r, const pk_generation_config* c) {
  int pieces = in.ConsumeIntegralInRange(1, 8);
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      check_status(pk_runner_generate(r, in.ConsumeRandomLengthString(64).c_str(), c, on_piece, &pieces), "generate");
      break;
    case 1: {
      std::vector<int32_t> prompt;
      for (int n = in.ConsumeIntegralInRange(0, 12); n > 0; --n)
        prompt.push_back(in.ConsumeBool() ? in.ConsumeIntegral<int32_t>() : in.ConsumeIntegralInRange(0, 299));
      const size_t capacity = in.ConsumeIntegralInRange<size_t>(0, kMaxNewTokens);
      std::vector<int32_t> out(capacity + 1, -7);  // one guard element past the capacity
      size_t n_out = 0;
      pk_status s = pk_runner_generate_ids(r, prompt.data(), prompt.size(), c, out.data(), capacity, &n_out);
      check_status(s, "generate_ids");
      if (s == PK_STATUS_OK) check(n_out <= capacity, "generate_ids: more ids than the capacity");
      check(out[capacity] == -7, "generate_ids wrote past the capacity");
      break;
    }
    case 2:
      if (in.ConsumeBool()) check_status(pk_runner_set_system_prompt(r, in.ConsumeRandomLengthString(64).c_str()), "set_system_prompt");
      check_status(pk_runner_chat(r, in.ConsumeRandomLengthString(64).c_str(), c, on_piece, &pieces), "chat");
      if (in.ConsumeBool()) check_status(pk_runner_chat(r, in.ConsumeRandomLengthString(64).c_str(), c, on_piece, &pieces), "chat (second turn)");
      break;
    case 3: {
      const size_t capacity = in.ConsumeIntegralInRange<size_t>(0, 64);
      std::vector<int32_t> ids(capacity + 1, -7);
      size_t n_out = 0;
      pk_status s = pk_runner_encode(r, in.ConsumeRandomLengthString(256).c_str(), in.ConsumeBool(), ids.data(), capacity, &n_out);
      check_status(s, "encode");
      check(ids[capacity] == -7, "encode wrote past the capacity");
      break;
    }
    default: {
      std::vector<int32_t> ids;
      for (int n = in.ConsumeIntegralInRange(0, 16); n > 0; --n) ids.push_back(in.ConsumeIntegralInRange(-2, 310));
      const size_t capacity = in.ConsumeIntegralInRange<size_t>(0, 128);
      std::vector<char> text(capacity + 1, '\x7f');
      size_t n_out = 0;
      pk_status s = pk_runner_decode(r, ids.data(), ids.size(), text.data(), capacity, &n_out);
      check_status(s, "decode");
      if (s == PK_STATUS_OK) check(n_out < capacity && text[n_out] == '\0', "decode: bad length or no NUL");
      check(text[capacity] == '\x7f', "decode wrote past the capacity");
    }
  }
  const char* reason = pk_runner_stop_reason(r);
  check(reason != nullptr, "stop_reason is NULL");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  pk_runner* r = runner();
  check_status(pk_runner_reset(r), "reset");  // each input starts a new conversation
  check_status(pk_runner_set_system_prompt(r, nullptr), "set_system_prompt");
  pk_generation_config* c = nullptr;
  check_status(pk_generation_config_create(&c), "config_create");
  configure(in, c);
  call(in, r, in.ConsumeBool() ? c : nullptr);
  pk_generation_config_destroy(c);
  return 0;
}
