/* The thread-safety contract of pocket.h and pocket_llm.h, in C with pthreads (and under
 * ThreadSanitizer: the `tsan` preset). Usage: c_threads_test GOLDEN_DIR
 *  - one module, 4 threads x 100 executes on different inputs (kernels on a 2-thread pool)
 *    while a fifth thread changes the thread count: every output equals the single-threaded one;
 *  - separate modules on separate threads;
 *  - one runner, 3 threads x 4 greedy generations: the golden ids or PK_STATUS_BUSY;
 *  - pk_runner_stop from another thread mid-generation, then the golden ids again;
 *  - calls from inside a piece callback: BUSY for a generation, stats work;
 *  - a pulled generation (pk_runner_start/next): two threads pulling it get pieces or BUSY,
 *    never a wrong status, and together the whole text; pk_runner_stop from another thread
 *    between pulls ends it as cancelled;
 *  - a memory limit under the module's arena: OUT_OF_MEMORY naming the limit, then raised. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pk_test.h"
#include "pocket/pocket_llm.h"

enum { kInputs = 4, kMaxElems = 4096, kMaxIds = 256 };

/* ---------------------------------------------------------------- one module, many threads */

typedef struct {
  pk_module* module;
  float inputs[kInputs][kMaxElems];
  float expected[kInputs][kMaxElems];
  int64_t in_shape[8], out_shape[8];
  size_t in_ndim, in_numel, out_numel;
  atomic_int wrong, failed;
} ModuleCase;

typedef struct {
  ModuleCase* c;
  pk_module* module;  /* the shared one, or a thread's own */
  int index;
  int calls;
} Worker;

/* Runs the module on input i; 1 when the output equals the single-threaded one. */
static int run_once(ModuleCase* c, pk_module* m, int i, float* out_copy) {
  pk_tensor* in = NULL;
  pk_tensor* out = NULL;
  if (pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, c->in_shape, c->in_ndim, c->inputs[i],
                                c->in_numel * sizeof(float), &in) != PK_STATUS_OK)
    return 0;
  pk_status s = pk_module_execute(m, "forward", &in, 1, &out, 1);
  int ok = s == PK_STATUS_OK && pk_tensor_numel(out) == c->out_numel;
  if (ok && out_copy) memcpy(out_copy, pk_tensor_data(out), c->out_numel * sizeof(float));
  if (ok && !out_copy) ok = memcmp(pk_tensor_data(out), c->expected[i], c->out_numel * sizeof(float)) == 0;
  if (s != PK_STATUS_OK) fprintf(stderr, "execute failed: %s: %s\n", pk_status_string(s), pk_last_error());
  pk_tensor_destroy(out);
  pk_tensor_destroy(in);
  return ok;
}

static void* execute_loop(void* arg) {
  Worker* w = (Worker*)arg;
  for (int k = 0; k < w->calls; ++k)
    if (!run_once(w->c, w->module, (w->index + k) % kInputs, NULL)) atomic_fetch_add(&w->c->wrong, 1);
  return NULL;
}

static void* change_threads(void* arg) {
  Worker* w = (Worker*)arg;
  for (int k = 0; k < w->calls; ++k)
    if (pk_module_set_num_threads(w->module, 1 + k % 2) != PK_STATUS_OK) atomic_fetch_add(&w->c->failed, 1);
  return NULL;
}

static int setup_module_case(ModuleCase* c, const char* path) {
  memset(c, 0, sizeof *c);
  CHECK_STATUS(pk_module_load_file(path, PK_LOAD_MMAP, &c->module), PK_STATUS_OK, NULL);
  if (c->module == NULL) return 0;
  pk_dtype dtype;
  int64_t lo[8];
  CHECK_STATUS(pk_module_input_info(c->module, "forward", 0, &dtype, &c->in_ndim, lo, c->in_shape, 8), PK_STATUS_OK, NULL);
  c->in_numel = 1;
  for (size_t d = 0; d < c->in_ndim; ++d) c->in_numel *= (size_t)c->in_shape[d];
  if (!CHECK(dtype == PK_DTYPE_FLOAT32 && c->in_numel <= kMaxElems, "mlp input is not float32 of <= %d", kMaxElems))
    return 0;
  for (int i = 0; i < kInputs; ++i)
    for (size_t j = 0; j < c->in_numel; ++j) c->inputs[i][j] = (float)((int)((j * 7 + (size_t)i * 13) % 17) - 8) / 8.0f;
  /* single-threaded reference */
  pk_tensor* in = NULL;
  pk_tensor* out = NULL;
  pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, c->in_shape, c->in_ndim, c->inputs[0], c->in_numel * sizeof(float), &in);
  CHECK_STATUS(pk_module_execute(c->module, "forward", &in, 1, &out, 1), PK_STATUS_OK, NULL);
  c->out_numel = out ? pk_tensor_numel(out) : 0;
  pk_tensor_destroy(out);
  pk_tensor_destroy(in);
  if (!CHECK(c->out_numel > 0 && c->out_numel <= kMaxElems, "mlp output has %zu elements", c->out_numel)) return 0;
  for (int i = 0; i < kInputs; ++i) CHECK(run_once(c, c->module, i, c->expected[i]), "reference run %d", i);
  return 1;
}

static void test_shared_module(const char* path) {
  static ModuleCase c;
  if (!setup_module_case(&c, path)) return;
  CHECK_STATUS(pk_module_set_num_threads(c.module, 2), PK_STATUS_OK, NULL);  /* the WorkerPool runs too */
  pthread_t threads[5];
  Worker workers[5];
  for (int t = 0; t < 5; ++t) {
    workers[t] = (Worker){&c, c.module, t, t < 4 ? 100 : 200};
    pthread_create(&threads[t], NULL, t < 4 ? execute_loop : change_threads, &workers[t]);
  }
  for (int t = 0; t < 5; ++t) pthread_join(threads[t], NULL);
  CHECK(atomic_load(&c.wrong) == 0, "%d of 400 shared-module results differ from the single-threaded ones",
        atomic_load(&c.wrong));
  CHECK(atomic_load(&c.failed) == 0, "set_num_threads failed during executes");

  /* separate modules, one per thread */
  pk_module* own[3] = {NULL, NULL, NULL};
  for (int t = 0; t < 3; ++t) {
    CHECK_STATUS(pk_module_load_file(path, PK_LOAD_MMAP, &own[t]), PK_STATUS_OK, NULL);
    pk_module_set_num_threads(own[t], 1 + t % 2);
    workers[t] = (Worker){&c, own[t], t, 50};
    pthread_create(&threads[t], NULL, execute_loop, &workers[t]);
  }
  for (int t = 0; t < 3; ++t) {
    pthread_join(threads[t], NULL);
    pk_module_destroy(own[t]);
  }
  CHECK(atomic_load(&c.wrong) == 0, "separate modules on separate threads gave wrong results");

  /* memory limit below the arena: refused before allocating, then raised */
  pk_module* m = NULL;
  CHECK_STATUS(pk_module_load_file(path, PK_LOAD_MMAP, &m), PK_STATUS_OK, NULL);
  CHECK(pk_module_memory_limit(m) > ((uint64_t)1 << 28), "default limit %llu is not the physical memory",
        (unsigned long long)pk_module_memory_limit(m));
  CHECK_STATUS(pk_module_set_memory_limit(m, 1024), PK_STATUS_OK, NULL);
  size_t n = 0;
  CHECK_STATUS(pk_module_input_count(m, "forward", &n), PK_STATUS_OUT_OF_MEMORY, "memory limit of 1024 bytes");
  CHECK_STATUS(pk_module_set_memory_limit(m, UINT64_MAX), PK_STATUS_OK, NULL);
  CHECK(run_once(&c, m, 1, NULL), "module after raising its memory limit");
  CHECK_STATUS(pk_module_set_memory_limit(NULL, 1), PK_STATUS_INVALID_ARGUMENT, "NULL");
  pk_module_destroy(m);
  pk_module_destroy(c.module);
}

/* ---------------------------------------------------------------- one runner, many threads */

typedef struct {
  pk_runner* runner;
  const int32_t* prompt;
  size_t n_prompt;
  const int32_t* want;
  size_t n_want;
  atomic_int ok, busy, wrong;
  atomic_int pieces;
  atomic_int stop_sent;
} RunnerCase;

static void* generate_loop(void* arg) {
  RunnerCase* c = (RunnerCase*)arg;
  pk_generation_config* config = NULL;
  pk_generation_config_create(&config);
  pk_generation_config_set_max_new_tokens(config, (int32_t)c->n_want);
  for (int k = 0; k < 4; ++k) {
    int32_t ids[kMaxIds];
    size_t n = 0;
    pk_status s = pk_runner_generate_ids(c->runner, c->prompt, c->n_prompt, config, ids, kMaxIds, &n);
    if (s == PK_STATUS_BUSY) {
      atomic_fetch_add(&c->busy, 1);
    } else if (s == PK_STATUS_OK && n == c->n_want && memcmp(ids, c->want, n * sizeof(int32_t)) == 0) {
      atomic_fetch_add(&c->ok, 1);
    } else {
      fprintf(stderr, "generation: %s, %zu ids: %s\n", pk_status_string(s), n, pk_last_error());
      atomic_fetch_add(&c->wrong, 1);
    }
  }
  pk_generation_config_destroy(config);
  return NULL;
}

/* A piece callback that checks what may be called from inside it. */
static int reentrant_piece(const char* piece, size_t size, void* user) {
  (void)piece;
  (void)size;
  RunnerCase* c = (RunnerCase*)user;
  atomic_fetch_add(&c->pieces, 1);
  if (atomic_load(&c->pieces) == 1) {
    int32_t ids[4];
    size_t n = 0;
    uint64_t g = 0;
    const char* p = NULL;
    size_t p_size = 0;
    int done = 0;
    CHECK_STATUS(pk_runner_start(c->runner, "x", NULL, &g), PK_STATUS_BUSY, "busy");
    CHECK_STATUS(pk_runner_start_chat(c->runner, "x", NULL, &g), PK_STATUS_BUSY, "busy");
    CHECK_STATUS(pk_runner_next(c->runner, g, &p, &p_size, &done), PK_STATUS_BUSY, "busy");
    CHECK_STATUS(pk_runner_generate_ids(c->runner, c->prompt, c->n_prompt, NULL, ids, 4, &n), PK_STATUS_BUSY, "busy");
    CHECK_STATUS(pk_runner_reset(c->runner), PK_STATUS_BUSY, "busy");
    int32_t generated = -1;
    CHECK_STATUS(pk_runner_stats(c->runner, NULL, NULL, NULL, NULL, NULL, &generated), PK_STATUS_OK, NULL);
    CHECK(generated >= 1, "stats inside the callback: %d tokens", generated);
  }
  return 0;
}

/* Counts pieces; after the second it holds the generation until the main thread has called
 * pk_runner_stop, so the stop lands mid-generation however fast the model is. */
static int count_piece(const char* piece, size_t size, void* user) {
  (void)piece;
  (void)size;
  RunnerCase* c = (RunnerCase*)user;
  if (atomic_fetch_add(&c->pieces, 1) + 1 == 2)
    while (!atomic_load(&c->stop_sent)) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
  return 0;
}

static void* generate_long(void* arg) {
  RunnerCase* c = (RunnerCase*)arg;
  pk_generation_config* config = NULL;
  pk_generation_config_create(&config);
  pk_generation_config_set_max_new_tokens(config, pk_runner_max_seq_len(c->runner));
  pk_status s = pk_runner_generate(c->runner, "Once upon a time", config, count_piece, c);
  CHECK(s == PK_STATUS_OK, "generation stopped from another thread returns OK, got %s", pk_status_string(s));
  pk_generation_config_destroy(config);
  return NULL;
}

/* ---------------------------------------------------------------- a pulled generation */

typedef struct {
  pk_runner* runner;
  uint64_t generation;
  atomic_int bytes, pieces, busy, wrong, done;
  int pause_at;          /* > 0: after this many pieces, wait for stop_sent before pulling on */
  atomic_int stop_sent;
} PullCase;

/* Pulls until done; counts what it got. */
static void* pull_loop(void* arg) {
  PullCase* c = (PullCase*)arg;
  for (int calls = 0; calls < 100000 && !atomic_load(&c->done); ++calls) {
    const char* piece = NULL;
    size_t size = 0;
    int done = 0;
    pk_status s = pk_runner_next(c->runner, c->generation, &piece, &size, &done);
    if (s == PK_STATUS_BUSY) {
      atomic_fetch_add(&c->busy, 1);
    } else if (s != PK_STATUS_OK) {
      fprintf(stderr, "pull: %s: %s\n", pk_status_string(s), pk_last_error());
      atomic_fetch_add(&c->wrong, 1);
      return NULL;
    } else if (done) {
      atomic_store(&c->done, 1);
    } else {
      atomic_fetch_add(&c->bytes, (int)size);
      if (atomic_fetch_add(&c->pieces, 1) + 1 == c->pause_at) {
        while (!atomic_load(&c->stop_sent)) {
          struct timespec ms = {0, 100000};
          nanosleep(&ms, NULL);
        }
      }
    }
  }
  return NULL;
}

static int count_bytes(const char* piece, size_t size, void* user) {
  (void)piece;
  *(size_t*)user += size;
  return 0;
}

static void test_pulled_generation(pk_runner* r, size_t n_want) {
  static PullCase c;
  memset(&c, 0, sizeof c);
  c.runner = r;
  pk_generation_config* config = NULL;
  pk_generation_config_create(&config);
  pk_generation_config_set_max_new_tokens(config, (int32_t)n_want);
  size_t n_text = 0;  /* bytes of the text a callback gets */
  CHECK_STATUS(pk_runner_generate(r, "Once upon a time", config, count_bytes, &n_text), PK_STATUS_OK, NULL);

  /* two threads pull one generation: together they get the whole text */
  CHECK_STATUS(pk_runner_start(r, "Once upon a time", config, &c.generation), PK_STATUS_OK, NULL);
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, pull_loop, &c);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  printf("pull: %d pieces, %d busy from 2 threads\n", atomic_load(&c.pieces), atomic_load(&c.busy));
  CHECK(atomic_load(&c.wrong) == 0 && atomic_load(&c.done) == 1, "pulling from two threads failed");
  CHECK((size_t)atomic_load(&c.bytes) == n_text, "two pullers got %d bytes of %zu", atomic_load(&c.bytes), n_text);
  CHECK(strcmp(pk_runner_stop_reason(r), "max_new_tokens") == 0, "stop reason '%s'", pk_runner_stop_reason(r));

  /* stop from another thread while one pulls a long generation: the puller holds after its
     second piece until the stop is sent, so the stop always lands before the tiny model's EOS */
  memset(&c, 0, sizeof c);
  c.runner = r;
  c.pause_at = 2;
  pk_generation_config_set_max_new_tokens(config, pk_runner_max_seq_len(r));
  CHECK_STATUS(pk_runner_start(r, "Once upon a time", config, &c.generation), PK_STATUS_OK, NULL);
  pthread_t puller;
  pthread_create(&puller, NULL, pull_loop, &c);
  while (atomic_load(&c.pieces) < 2 && !atomic_load(&c.done)) {
    struct timespec ms = {0, 100000};
    nanosleep(&ms, NULL);
  }
  pk_runner_stop(r);
  atomic_store(&c.stop_sent, 1);
  pthread_join(puller, NULL);
  int32_t generated = 0;
  pk_runner_stats(r, NULL, NULL, NULL, NULL, NULL, &generated);
  CHECK(atomic_load(&c.done) == 1 && atomic_load(&c.wrong) == 0, "the stopped pull did not end cleanly");
  CHECK(strcmp(pk_runner_stop_reason(r), "cancelled") == 0, "stop reason after pk_runner_stop: '%s'",
        pk_runner_stop_reason(r));
  CHECK(generated < pk_runner_max_seq_len(r), "%d tokens generated despite the stop", generated);
  pk_generation_config_destroy(config);
}

static void test_shared_runner(const char* dir, const int32_t* prompt, size_t n_prompt, const int32_t* want,
                               size_t n_want) {
  char model[1024], tokenizer[1024];
  snprintf(model, sizeof model, "%s/tiny_llm.pocket", dir);
  snprintf(tokenizer, sizeof tokenizer, "%s/tiny_llm.tokenizer.json", dir);
  static RunnerCase c;
  memset(&c, 0, sizeof c);
  CHECK_STATUS(pk_runner_create(model, tokenizer, &c.runner), PK_STATUS_OK, NULL);
  if (c.runner == NULL) return;
  pk_runner_set_num_threads(c.runner, 2);
  c.prompt = prompt;
  c.n_prompt = n_prompt;
  c.want = want;
  c.n_want = n_want;

  pthread_t threads[3];
  for (int t = 0; t < 3; ++t) pthread_create(&threads[t], NULL, generate_loop, &c);
  for (int t = 0; t < 3; ++t) pthread_join(threads[t], NULL);
  printf("runner: %d golden, %d busy of 12 concurrent generations\n", atomic_load(&c.ok), atomic_load(&c.busy));
  CHECK(atomic_load(&c.wrong) == 0, "%d concurrent generations were neither golden nor BUSY", atomic_load(&c.wrong));
  CHECK(atomic_load(&c.ok) >= 1, "no concurrent generation finished");

  /* stop from another thread, mid-generation */
  atomic_store(&c.pieces, 0);
  pthread_t gen;
  pthread_create(&gen, NULL, generate_long, &c);
  while (atomic_load(&c.pieces) < 2) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  CHECK_STATUS(pk_runner_reset(c.runner), PK_STATUS_BUSY, "busy");  /* another thread's generation runs */
  pk_runner_stop(c.runner);
  atomic_store(&c.stop_sent, 1);
  pthread_join(gen, NULL);
  const char* reason = pk_runner_stop_reason(c.runner);
  int32_t generated = 0;
  pk_runner_stats(c.runner, NULL, NULL, NULL, NULL, NULL, &generated);
  CHECK(strcmp(reason, "cancelled") == 0, "stop reason after pk_runner_stop: '%s'", reason);
  CHECK(generated < pk_runner_max_seq_len(c.runner) / 2, "%d tokens generated despite the stop", generated);
  generate_loop(&c);  /* usable afterwards: 4 more golden generations */
  CHECK(atomic_load(&c.wrong) == 0, "generations after a stop were not golden");

  /* from inside the callback */
  atomic_store(&c.pieces, 0);
  CHECK_STATUS(pk_runner_generate(c.runner, "Once upon a time", NULL, reentrant_piece, &c), PK_STATUS_OK, NULL);
  CHECK(atomic_load(&c.pieces) > 0, "no pieces");
  test_pulled_generation(c.runner, n_want);
  pk_runner_destroy(c.runner);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: c_threads_test GOLDEN_DIR\n");
    return 2;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/mlp.pocket", argv[1]);
  test_shared_module(path);

  snprintf(path, sizeof path, "%s/tiny_llm.greedy.txt", argv[1]);
  size_t size = 0;
  char* text = (char*)pk_read_file(path, &size);
  if (!CHECK(text != NULL, "cannot read %s", path)) return pk_test_finish();
  text = (char*)realloc(text, size + 1);
  text[size] = '\0';
  int32_t prompt[kMaxIds], want[kMaxIds];
  size_t n_prompt = 0, n_want = 0;
  for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    int32_t* ids = strncmp(line, "prompt_ids ", 11) == 0 ? prompt : strncmp(line, "greedy_ids ", 11) == 0 ? want : NULL;
    size_t* n = ids == prompt ? &n_prompt : &n_want;
    for (char* p = line + 11; ids && *p && *n < kMaxIds;) {
      char* end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      ids[(*n)++] = (int32_t)v;
      p = end;
    }
  }
  free(text);
  test_shared_runner(argv[1], prompt, n_prompt, want, n_want);
  return pk_test_finish();
}
