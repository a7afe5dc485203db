/* The LLM runner through the C API (pocket_llm.h), on the golden tiny LLM: greedy ids equal
 * eager PyTorch's (tests/golden/tiny_llm.greedy.txt), streamed text equals the decoded ids,
 * chat keeps its cache, and misuse fails cleanly. Usage: c_runner_test GOLDEN_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocket/pocket_llm.h"

static int passed = 0, failed = 0;

#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (cond) {                                               \
      ++passed;                                               \
    } else {                                                  \
      ++failed;                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, " (last error: %s)\n", pk_last_error()); \
    }                                                         \
  } while (0)

static size_t parse_ids(const char* line, int32_t* ids, size_t cap) {
  size_t n = 0;
  for (char* p = (char*)line; *p && n < cap;) {
    char* end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    ids[n++] = (int32_t)v;
    p = end;
  }
  return n;
}

typedef struct {
  char text[4096];
  size_t size;
  int pieces;
  int stop_after;
} Sink;

static int collect(const char* piece, size_t size, void* user) {
  Sink* s = (Sink*)user;
  if (s->size + size < sizeof s->text) {
    memcpy(s->text + s->size, piece, size);
    s->size += size;
    s->text[s->size] = '\0';
  }
  ++s->pieces;
  return s->stop_after > 0 && s->pieces >= s->stop_after;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: c_runner_test GOLDEN_DIR\n");
    return 2;
  }
  char model[1024], tokenizer[1024], greedy_path[1024];
  snprintf(model, sizeof model, "%s/tiny_llm.pocket", argv[1]);
  snprintf(tokenizer, sizeof tokenizer, "%s/tiny_llm.tokenizer.json", argv[1]);
  snprintf(greedy_path, sizeof greedy_path, "%s/tiny_llm.greedy.txt", argv[1]);

  int32_t prompt[256], want[256];
  size_t n_prompt = 0, n_want = 0;
  char prompt_text[256] = "";
  FILE* f = fopen(greedy_path, "r");
  if (f == NULL) {
    fprintf(stderr, "no %s: run tests/golden/make_golden.py\n", greedy_path);
    return 1;
  }
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "prompt_ids ", 11) == 0) n_prompt = parse_ids(line + 11, prompt, 256);
    if (strncmp(line, "greedy_ids ", 11) == 0) n_want = parse_ids(line + 11, want, 256);
    if (strncmp(line, "prompt_text ", 12) == 0) snprintf(prompt_text, sizeof prompt_text, "%s", line + 12);
  }
  fclose(f);

  pk_runner* r = NULL;
  CHECK(pk_runner_create(model, tokenizer, &r) == PK_STATUS_OK, "load runner");
  if (r == NULL) return 1;

  /* Greedy ids equal eager PyTorch's. */
  pk_generation_config* c = NULL;
  CHECK(pk_generation_config_create(&c) == PK_STATUS_OK, "config");
  CHECK(pk_generation_config_set_max_new_tokens(c, (int32_t)n_want) == PK_STATUS_OK, "max_new_tokens");
  int32_t got[256];
  size_t n_got = 0;
  CHECK(pk_runner_generate_ids(r, prompt, n_prompt, c, got, 256, &n_got) == PK_STATUS_OK, "generate_ids");
  CHECK(n_got == n_want && memcmp(got, want, n_want * sizeof(int32_t)) == 0, "greedy ids differ from PyTorch's");

  /* The tokenizer gives the golden prompt ids; streamed text equals the decoded ids. */
  int32_t enc[256];
  size_t n_enc = 0;
  CHECK(pk_runner_encode(r, prompt_text, 0, enc, 256, &n_enc) == PK_STATUS_OK, "encode");
  CHECK(n_enc == n_prompt && memcmp(enc, prompt, n_prompt * sizeof(int32_t)) == 0, "encode differs from HF");
  Sink sink = {{0}, 0, 0, 0};
  CHECK(pk_runner_generate(r, prompt_text, c, collect, &sink) == PK_STATUS_OK, "generate");
  char decoded[4096];
  size_t n_dec = 0;
  CHECK(pk_runner_decode(r, want, n_want, decoded, sizeof decoded, &n_dec) == PK_STATUS_OK, "decode");
  CHECK(sink.size == n_dec && memcmp(sink.text, decoded, n_dec) == 0, "streamed text differs from decode(ids)");
  double ttft = 0, decode_rate = 0;
  int32_t generated = 0;
  CHECK(pk_runner_stats(r, NULL, &ttft, NULL, &decode_rate, NULL, &generated) == PK_STATUS_OK, "stats");
  CHECK(ttft > 0 && decode_rate > 0 && generated == (int32_t)n_want, "stats: ttft %g, decode %g, tokens %d", ttft,
        decode_rate, generated);
  CHECK(strcmp(pk_runner_stop_reason(r), "max_new_tokens") == 0, "stop reason %s", pk_runner_stop_reason(r));

  /* Pulled: the same pieces as the callback's, then done (again and again). */
  pk_generation_config_set_max_new_tokens(c, (int32_t)n_want);
  uint64_t g = 0;
  CHECK(pk_runner_start(r, prompt_text, c, &g) == PK_STATUS_OK, "start");
  Sink pulled = {{0}, 0, 0, 0};
  const char* piece = NULL;
  size_t size = 0;
  int done = 0, steps = 0;
  while (pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_OK && !done && steps++ < 1000) {
    CHECK(size > 0, "a piece that is not done is not empty");
    collect(piece, size, &pulled);
  }
  CHECK(done && size == 0, "the generation ends with done and no piece");
  CHECK(pulled.size == n_dec && memcmp(pulled.text, decoded, n_dec) == 0, "pulled text differs from decode(ids)");
  CHECK(pulled.pieces == sink.pieces, "pulled %d pieces, the callback got %d", pulled.pieces, sink.pieces);
  CHECK(strcmp(pk_runner_stop_reason(r), "max_new_tokens") == 0, "pulled stop reason %s", pk_runner_stop_reason(r));
  CHECK(pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_OK && done && size == 0, "done stays done");
  CHECK(pk_runner_stats(r, NULL, NULL, NULL, NULL, NULL, &generated) == PK_STATUS_OK && generated == (int32_t)n_want,
        "pulled stats: %d tokens", generated);
  /* stop (cancel) between two pulls; a later start supersedes an earlier generation */
  CHECK(pk_runner_start(r, prompt_text, c, &g) == PK_STATUS_OK, "start");
  CHECK(pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_OK && !done, "first piece");
  pk_runner_stop(r);
  CHECK(pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_OK && done, "done after stop");
  CHECK(strcmp(pk_runner_stop_reason(r), "cancelled") == 0, "stop reason after stop: %s", pk_runner_stop_reason(r));
  uint64_t g2 = 0;
  CHECK(pk_runner_start(r, prompt_text, c, &g) == PK_STATUS_OK, "start");
  CHECK(pk_runner_start(r, prompt_text, c, &g2) == PK_STATUS_OK && g2 != g, "start again");
  CHECK(pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_CANCELLED &&
            strstr(pk_last_error(), "superseded") != NULL, "a superseded generation is CANCELLED");
  CHECK(pk_runner_next(r, g2, &piece, &size, &done) == PK_STATUS_OK && !done, "the new one goes on");
  CHECK(pk_runner_reset(r) == PK_STATUS_OK, "reset");
  CHECK(pk_runner_next(r, g2, &piece, &size, &done) == PK_STATUS_CANCELLED, "reset supersedes");
  /* chat pulled: the cache grows by the turn */
  CHECK(pk_runner_start_chat(r, "Hi", c, &g) == PK_STATUS_OK, "start_chat");
  while (pk_runner_next(r, g, &piece, &size, &done) == PK_STATUS_OK && !done) {
  }
  CHECK(done && pk_runner_position(r) > (int32_t)n_want, "pulled chat turn");
  /* misuse */
  CHECK(pk_runner_start(NULL, "x", c, &g) == PK_STATUS_INVALID_ARGUMENT, "start: NULL runner");
  CHECK(pk_runner_start(r, NULL, c, &g) == PK_STATUS_INVALID_ARGUMENT, "start: NULL prompt");
  CHECK(pk_runner_start(r, "x", c, NULL) == PK_STATUS_INVALID_ARGUMENT, "start: NULL generation");
  CHECK(pk_runner_start_chat(r, NULL, c, &g) == PK_STATUS_INVALID_ARGUMENT, "start_chat: NULL message");
  CHECK(pk_runner_next(NULL, g, &piece, &size, &done) == PK_STATUS_INVALID_ARGUMENT, "next: NULL runner");
  CHECK(pk_runner_next(r, g, NULL, &size, &done) == PK_STATUS_INVALID_ARGUMENT &&
            strstr(pk_last_error(), "NULL") != NULL, "next: NULL piece");
  CHECK(pk_runner_next(r, g + 100, &piece, &size, &done) == PK_STATUS_CANCELLED, "next: unknown generation");

  /* A callback that returns nonzero stops the generation. */
  pk_generation_config_set_max_new_tokens(c, (int32_t)n_want);
  Sink early = {{0}, 0, 0, 2};
  CHECK(pk_runner_generate(r, prompt_text, c, collect, &early) == PK_STATUS_OK, "generate with early stop");
  CHECK(strcmp(pk_runner_stop_reason(r), "cancelled") == 0, "stop reason after callback stop: %s",
        pk_runner_stop_reason(r));

  /* Chat: two turns, the second continues the cache. */
  pk_generation_config_set_max_new_tokens(c, 4);
  CHECK(pk_runner_set_system_prompt(r, "Be brief.") == PK_STATUS_OK, "system prompt");
  Sink t1 = {{0}, 0, 0, 0}, t2 = {{0}, 0, 0, 0};
  CHECK(pk_runner_chat(r, "Hi", c, collect, &t1) == PK_STATUS_OK, "chat turn 1");
  int32_t after_first = pk_runner_position(r);
  CHECK(pk_runner_chat(r, "More", c, collect, &t2) == PK_STATUS_OK, "chat turn 2");
  CHECK(pk_runner_position(r) > after_first + 4, "turn 2 did not continue the cache");

  /* Misuse and bad input. */
  int32_t too_long[200];
  for (int i = 0; i < 200; ++i) too_long[i] = 5;
  CHECK(pk_runner_generate_ids(r, too_long, 200, c, got, 256, &n_got) == PK_STATUS_OUT_OF_RANGE &&
            strstr(pk_last_error(), "context overflow") != NULL, "prompt longer than the context");
  CHECK(pk_runner_generate(NULL, "x", c, collect, &sink) == PK_STATUS_INVALID_ARGUMENT, "NULL runner");
  CHECK(pk_runner_generate(r, NULL, c, collect, &sink) == PK_STATUS_INVALID_ARGUMENT, "NULL prompt");
  /* Sampler values are checked once, by the setters; a refused one leaves the config as it was. */
  CHECK(pk_generation_config_set_temperature(c, -1.0f) == PK_STATUS_INVALID_ARGUMENT &&
            strstr(pk_last_error(), "temperature") != NULL, "negative temperature");
  CHECK(pk_generation_config_set_repetition_penalty(c, 1.0f / 0.0f) == PK_STATUS_INVALID_ARGUMENT &&
            strstr(pk_last_error(), "repetition_penalty") != NULL, "infinite repetition penalty");
  CHECK(pk_generation_config_set_top_p(c, 0.0f) == PK_STATUS_INVALID_ARGUMENT, "top_p 0");
  CHECK(pk_generation_config_set_min_p(c, 0.0f / 0.0f) == PK_STATUS_INVALID_ARGUMENT, "min_p NaN");
  CHECK(pk_generation_config_set_top_k(c, -2) == PK_STATUS_INVALID_ARGUMENT, "top_k -2");
  Sink after_refusal = {{0}, 0, 0, 0};
  CHECK(pk_runner_generate(r, "x", c, collect, &after_refusal) == PK_STATUS_OK &&
            strcmp(pk_runner_stop_reason(r), "max_new_tokens") == 0, "a config after refused values still works");
  pk_runner* bad = NULL;
  CHECK(pk_runner_create(model, NULL, &bad) == PK_STATUS_NOT_FOUND && bad == NULL, "no embedded tokenizer");
  CHECK(pk_runner_create(model, model, &bad) != PK_STATUS_OK && bad == NULL, "a .pocket file as tokenizer");
  CHECK(pk_runner_create("/nonexistent.pocket", tokenizer, &bad) == PK_STATUS_NOT_FOUND, "missing model");
  char golden_mlp[1024];
  snprintf(golden_mlp, sizeof golden_mlp, "%s/mlp.pocket", argv[1]);
  CHECK(pk_runner_create(golden_mlp, tokenizer, &bad) == PK_STATUS_INVALID_ARGUMENT &&
            strstr(pk_last_error(), "not an LLM program") != NULL, "non-LLM program");
  pk_runner_stop(NULL);
  pk_runner_destroy(NULL);
  pk_generation_config_destroy(NULL);

  pk_generation_config_destroy(c);
  pk_runner_destroy(r);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
