/* Pocket C API for chat models: the LLM runner (tokenizer, sampler, KV cache) over a
 * program exported by `pocket llm export`. Same conventions as pocket.h: pk_status results,
 * pk_last_error() messages, out-parameters untouched on failure, destroy accepts NULL,
 * ownership written at every pointer.
 *
 *   pk_runner* r = NULL;
 *   if (pk_runner_create("smol.pocket", NULL, &r) != PK_STATUS_OK) {   // NULL: embedded tokenizer
 *     fprintf(stderr, "%s\n", pk_last_error());
 *     return 1;
 *   }
 *   pk_generation_config* c = NULL;
 *   pk_generation_config_create(&c);
 *   pk_generation_config_set_max_new_tokens(c, 64);
 *   pk_runner_generate(r, "Once upon a time", c, print_piece, NULL);
 *   pk_generation_config_destroy(c);
 *   pk_runner_destroy(r);
 *
 * Pulling instead of being called back (what the bindings' streams are built on):
 *
 *   uint64_t g = 0;
 *   pk_runner_start(r, "Once upon a time", c, &g);
 *   for (;;) {
 *     const char* piece; size_t size; int done;
 *     if (pk_runner_next(r, g, &piece, &size, &done) != PK_STATUS_OK || done) break;
 *     fwrite(piece, 1, size, stdout);
 *   }
 *
 * Thread safety: a runner runs one call at a time and never makes a caller wait for another
 * thread's generation. generate, generate_ids, chat, start, start_chat, next, reset and
 * set_system_prompt called while another call runs on the runner (on another thread, or from
 * inside a piece callback) fail at once with PK_STATUS_BUSY and change nothing. Between two
 * pk_runner_next calls no call runs: a generate, chat, start, start_chat or reset then
 * supersedes the pulled generation, and pk_runner_next on it fails with PK_STATUS_CANCELLED. Any thread may call, at any time:
 *  - pk_runner_stop: ends the running generation after its current token (its call returns
 *    PK_STATUS_OK with stop reason "cancelled"; a pulled one says done at its next
 *    pk_runner_next); the runner is usable right after;
 *  - pk_runner_set_num_threads: applies from the next forward pass, also mid-generation;
 *  - pk_runner_stats, pk_runner_stop_reason, pk_runner_position and the getters: a consistent
 *    snapshot of the running or last generation;
 *  - pk_runner_encode, pk_runner_decode (the tokenizer is immutable).
 * pk_runner_destroy while another thread is inside a call on the runner is a use after free:
 * stop the generation and let its call return first (Java's LlmModule.close() does exactly
 * this; Swift's TextRunner and Python's Runner are destroyed only when their last reference,
 * a running generation's included, is gone).
 */
#ifndef POCKET_POCKET_LLM_H_
#define POCKET_POCKET_LLM_H_

#include "pocket/pocket.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pk_runner pk_runner;
typedef struct pk_generation_config pk_generation_config;

/* Called with each piece of generated text (UTF-8, never a split character; not
 * NUL-terminated: `size` bytes at `piece`, valid during the call). Return 0 to go on, any
 * other value to stop. user_data is passed through. */
typedef int (*pk_piece_callback)(const char* piece, size_t size, void* user_data);

/* ---------------------------------------------------------------- generation config ------ */

/* Defaults: 256 new tokens, greedy (temperature 0), no top-k/top-p/min-p, no repetition
 * penalty, seed 0, no stop strings. *out: owned by the caller (pk_generation_config_destroy).
 * Each setter checks its value (the one check every binding relies on) and refuses a bad one
 * with INVALID_ARGUMENT naming it, leaving the config as it was: max_new_tokens >= 0,
 * temperature >= 0 and finite, top_k >= 0, top_p in (0, 1], min_p in [0, 1],
 * repetition_penalty > 0 and finite. */
PK_API pk_status pk_generation_config_create(pk_generation_config** out);
PK_API void pk_generation_config_destroy(pk_generation_config* config);
PK_API pk_status pk_generation_config_set_max_new_tokens(pk_generation_config* config, int32_t n);
PK_API pk_status pk_generation_config_set_temperature(pk_generation_config* config, float t);
PK_API pk_status pk_generation_config_set_top_k(pk_generation_config* config, int32_t k);
PK_API pk_status pk_generation_config_set_top_p(pk_generation_config* config, float p);
PK_API pk_status pk_generation_config_set_min_p(pk_generation_config* config, float p);
PK_API pk_status pk_generation_config_set_repetition_penalty(pk_generation_config* config, float penalty);
PK_API pk_status pk_generation_config_set_seed(pk_generation_config* config, uint64_t seed);
/* Generation ends before `stop` appears in the text (copied; borrowed for the call). */
PK_API pk_status pk_generation_config_add_stop_string(pk_generation_config* config, const char* stop);

/* ---------------------------------------------------------------- runner ----------------- */

/* Loads an LLM program and its tokenizer (tokenizer.json, tiktoken or llama2.c
 * tokenizer.bin at `tokenizer_path`, or the program's embedded tokenizer when NULL).
 * Paths: borrowed for the call. *out: owned by the caller (pk_runner_destroy). Fails with
 * NOT_FOUND, INVALID_PROGRAM, or INVALID_ARGUMENT for a program that is not an LLM or a
 * tokenizer that does not fit its vocabulary. */
PK_API pk_status pk_runner_create(const char* model_path, const char* tokenizer_path, pk_runner** out);
PK_API void pk_runner_destroy(pk_runner* runner);

/* Kernel threads (see pk_module_set_num_threads); any thread, any time. */
PK_API pk_status pk_runner_set_num_threads(pk_runner* runner, int num_threads);
/* The model's memory limit (see pk_module_set_memory_limit); its memory is allocated on the
 * first generation, so a limit set right after pk_runner_create applies to all of it. */
PK_API pk_status pk_runner_set_memory_limit(pk_runner* runner, uint64_t bytes);

/* Streams the continuation of `prompt` (borrowed for the call) to `callback`; each call
 * starts a new text. config: borrowed for the call, NULL for defaults. A prompt that does
 * not fit the context fails with OUT_OF_RANGE. */
PK_API pk_status pk_runner_generate(pk_runner* runner, const char* prompt, const pk_generation_config* config,
                                    pk_piece_callback callback, void* user_data);

/* The same on token ids: `prompt` (n_prompt ids, borrowed) as given, no BOS added. Generated
 * ids go to `out` (caller array of `capacity`); *n_out receives their count. Generation stops
 * at `capacity` tokens if that comes before max_new_tokens. */
PK_API pk_status pk_runner_generate_ids(pk_runner* runner, const int32_t* prompt, size_t n_prompt,
                                        const pk_generation_config* config, int32_t* out, size_t capacity,
                                        size_t* n_out);

/* One chat turn: `message` (borrowed) is formatted with the model's chat template (system
 * prompt on the first turn) and the reply streamed; earlier turns stay in the KV cache. */
PK_API pk_status pk_runner_chat(pk_runner* runner, const char* message, const pk_generation_config* config,
                                pk_piece_callback callback, void* user_data);
/* Used by the next first turn (copied). NULL or "" for none. */
PK_API pk_status pk_runner_set_system_prompt(pk_runner* runner, const char* system_prompt);
/* Forgets the conversation. */
PK_API pk_status pk_runner_reset(pk_runner* runner);
/* Ends a running generation after the current token; its call returns PK_STATUS_OK with
 * stop reason "cancelled". Any thread; a no-op when no generation runs. NULL is allowed. */
PK_API void pk_runner_stop(pk_runner* runner);

/* ---------------------------------------------------------------- pulling a generation ---- */

/* pk_runner_generate and pk_runner_chat pulled piece by piece: start prefills the prompt
 * (generate's: a new text; start_chat's: one chat turn) and sets *generation, the id to pass
 * to pk_runner_next. prompt/message, config: borrowed for the call (config NULL: defaults).
 * Fails like pk_runner_generate / pk_runner_chat; then pk_runner_next says done at once. */
PK_API pk_status pk_runner_start(pk_runner* runner, const char* prompt, const pk_generation_config* config,
                                 uint64_t* generation);
PK_API pk_status pk_runner_start_chat(pk_runner* runner, const char* message, const pk_generation_config* config,
                                      uint64_t* generation);
/* Runs the generation until its next piece of text (UTF-8, never a split character): *piece
 * and *size receive it and *done 0; or until it ends: *size 0 and *done 1 (then
 * pk_runner_stop_reason says why; later calls say done again). *piece: owned by the runner,
 * valid until the next call on it. PK_STATUS_CANCELLED when a later start, generate, chat or
 * reset superseded `generation`; PK_STATUS_BUSY when another call runs on the runner. */
PK_API pk_status pk_runner_next(pk_runner* runner, uint64_t generation, const char** piece, size_t* size,
                                int* done);

/* Statistics of the last generation; any out-pointer may be NULL. */
PK_API pk_status pk_runner_stats(const pk_runner* runner, double* load_ms, double* ttft_ms, double* prefill_tok_s,
                                 double* decode_tok_s, int32_t* prompt_tokens, int32_t* generated_tokens);
/* Why the last generation ended: "eos", "stop_string", "max_new_tokens", "context_full",
 * "cancelled", or "" before any and while one runs. Static storage. */
PK_API const char* pk_runner_stop_reason(const pk_runner* runner);

PK_API int32_t pk_runner_max_seq_len(const pk_runner* runner);
PK_API int32_t pk_runner_vocab_size(const pk_runner* runner);
/* Tokens in the KV cache (the conversation so far). */
PK_API int32_t pk_runner_position(const pk_runner* runner);

/* The runner's tokenizer. text: borrowed. ids: caller array of `capacity`; *n_out receives
 * the count (when capacity is too small: OUT_OF_RANGE and *n_out the count needed). */
PK_API pk_status pk_runner_encode(pk_runner* runner, const char* text, int add_bos, int32_t* ids, size_t capacity,
                                  size_t* n_out);
/* Decodes ids into `text` (caller buffer of `capacity` bytes, NUL-terminated on success);
 * *n_out receives the length without the NUL (when too small: OUT_OF_RANGE and the length needed). */
PK_API pk_status pk_runner_decode(pk_runner* runner, const int32_t* ids, size_t n_ids, char* text, size_t capacity,
                                  size_t* n_out);

/* ---------------------------------------------------------------- runner from a file region */

/* pk_runner_create for the LLM program stored in `length` bytes of the open file `fd` at
 * `offset` (an asset inside an APK, a stored zip entry): mapped in place when `offset` is a
 * multiple of 16, read otherwise, and checked, exactly as pk_module_load_fd() does.
 * fd: borrowed for the call (the caller may close it afterwards). tokenizer_path: borrowed
 * for the call; NULL uses the tokenizer embedded in the program. *out: owned by the caller
 * (pk_runner_destroy). Fails like pk_module_load_fd() and pk_runner_create(). */
PK_API pk_status pk_runner_create_fd(int fd, uint64_t offset, uint64_t length, const char* tokenizer_path,
                                     pk_runner** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POCKET_POCKET_LLM_H_ */
