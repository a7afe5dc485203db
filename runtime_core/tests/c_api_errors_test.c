/* Bad-input test of the C API (pocket.h only, C11 + POSIX): every way of misusing the API or
 * feeding it a broken file must fail with the right pk_status and a pk_last_error() that names
 * the problem, leave out-parameters untouched, and never crash or hang.
 *
 *   c_api_errors_test tests/golden
 *
 * Most checks use the smallest DIR/<name>.pocket that has a DIR/<name>.<method>.io: missing,
 * empty and truncated files (every length), wrong magic, unsupported versions and other bad
 * header fields, wrong inputs (count, dtype, rank, shape bounds, NULL), output slot count,
 * NULL arguments to every function. Every golden program is corrupted byte by byte before its
 * segments (and at random); each broken copy must fail cleanly or load, run and fail cleanly.
 * Ends with "N passed, M failed"; exits non-zero when a check failed.
 */
#include "pk_test.h"

#include <signal.h>
#include <unistd.h>

static const char* g_dir;
static char g_tmp[512];  /* scratch directory for broken files */
static char g_case[512] = "start"; /* printed if the process dies */

#if defined(__SANITIZE_ADDRESS__)
#define PK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PK_UNDER_ASAN 1
#endif
#endif

#ifdef PK_UNDER_ASAN
#include <sanitizer/common_interface_defs.h>
static void on_sanitizer_death(void) { fprintf(stderr, "\nCRASH: sanitizer report during: %s\n", g_case); }
#else
static void on_crash(int sig) {
  /* Not async-signal-safe, but the process is about to die anyway: say where. */
  fprintf(stderr, "\nCRASH: signal %d during: %s\n", sig, g_case);
  fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
}

#endif

static void install_crash_handlers(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* keep the progress lines if the process dies */
#ifdef PK_UNDER_ASAN /* AddressSanitizer prints the report; add which case was running */
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  signal(SIGILL, on_crash);
  signal(SIGABRT, on_crash);
#endif
}

/* ------------------------------------------------------------------ the target program -- */

typedef struct target {
  const char* name;
  uint8_t* bytes;
  size_t size;
  uint64_t fb_size, segment_base; /* from the header */
  int has_io;
  char method[256];               /* a method with golden data (when has_io) */
  pk_io io;
} target;

static uint64_t rd64(const uint8_t* p) { return (uint64_t)pk_le64(p); }

static void wr32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* Reads DIR/<name>.pocket and the first <name>.<method>.io that parses. Returns 0 when the
 * program does not load (c_api_test reports that). */
static int read_target(const char* name, target* t) {
  char file[600];
  memset(t, 0, sizeof *t);
  snprintf(file, sizeof file, "%s/%s.pocket", g_dir, name);
  t->bytes = pk_read_file(file, &t->size);
  pk_module* m = NULL;
  if (t->bytes == NULL || pk_module_load_buffer(t->bytes, t->size, &m) != PK_STATUS_OK) {
    free(t->bytes);
    return 0;
  }
  t->name = pk_strdup(name);
  t->fb_size = rd64(t->bytes + 16);
  t->segment_base = rd64(t->bytes + 24);
  for (size_t k = 0; k < pk_module_method_count(m) && !t->has_io; ++k) {
    const char* method = pk_module_method_name(m, k);
    snprintf(file, sizeof file, "%s/%s.%s.io", g_dir, name, method);
    size_t io_size = 0;
    uint8_t* io_bytes = pk_read_file(file, &io_size);
    if (io_bytes == NULL) continue;
    const char* bad = pk_io_parse(io_bytes, io_size, &t->io);
    free(io_bytes);
    if (bad != NULL) {
      pk_io_free(&t->io);
      continue;
    }
    t->has_io = 1;
    snprintf(t->method, sizeof t->method, "%s", method);
  }
  pk_module_destroy(m);
  return 1;
}

static void free_target(target* t) {
  free(t->bytes);
  free((char*)t->name);
  pk_io_free(&t->io);
}

/* Reads every golden program that loads; *smallest is the smallest one with golden data. */
static target* read_targets(size_t* count, target** smallest) {
  size_t n = 0;
  char** names = pk_list_programs(g_dir, &n);
  *count = 0;
  *smallest = NULL;
  if (names == NULL || n == 0) {
    CHECK(0, "no golden programs in %s (expected <name>.pocket files, made by "
             "tests/golden/make_golden.py)", g_dir);
    pk_free_names(names, n);
    return NULL;
  }
  target* ts = (target*)calloc(n, sizeof *ts);
  for (size_t i = 0; i < n; ++i) {
    if (!read_target(names[i], &ts[*count])) continue;
    target* t = &ts[(*count)++];
    if (t->has_io && (*smallest == NULL || t->size < (*smallest)->size)) *smallest = t;
  }
  pk_free_names(names, n);
  if (!CHECK(*smallest != NULL, "no golden program in %s loads and has a <name>.<method>.io file", g_dir))
    return ts;
  printf("target: %s.pocket (%zu bytes, flatbuffer %llu bytes, segments at %llu), method '%s'\n",
         (*smallest)->name, (*smallest)->size, (unsigned long long)(*smallest)->fb_size,
         (unsigned long long)(*smallest)->segment_base, (*smallest)->method);
  return ts;
}

/* ------------------------------------------------------------------ load helpers -------- */

static pk_module* const kSentinel = (pk_module*)(uintptr_t)0x5e5e5e5e;

/* Loads `size` bytes via pk_module_load_buffer; expects `want` (and `needle` in the message).
 * On failure also checks that *out was left alone. */
static void expect_buffer(const uint8_t* bytes, size_t size, pk_status want, const char* needle,
                          const char* what) {
  pk_module* m = kSentinel;
  snprintf(g_case, sizeof g_case, "load_buffer: %s", what);
  pk_status s = pk_module_load_buffer(bytes, size, &m);
  pk_check_status(s, want, needle, __FILE__, __LINE__, what);
  if (s == PK_STATUS_OK) {
    pk_module_destroy(m);
  } else {
    CHECK(m == kSentinel, "%s: *out changed by a failed load", what);
  }
}

/* Writes the bytes to a scratch file and loads it with both modes; expects `want`, `needle`
 * and (on failure) the file name in the message. */
static void expect_file(const uint8_t* bytes, size_t size, pk_status want, const char* needle,
                        const char* what) {
  char path[600];
  snprintf(path, sizeof path, "%s/broken.pocket", g_tmp);
  if (!CHECK(pk_write_file(path, bytes, size), "cannot write %s", path)) return;
  for (int mode = 0; mode < 2; ++mode) {
    char label[400];
    snprintf(label, sizeof label, "%s (load_file, %s)", what, mode ? "READ" : "MMAP");
    snprintf(g_case, sizeof g_case, "%s", label);
    pk_module* m = kSentinel;
    pk_status s = pk_module_load_file(path, mode ? PK_LOAD_READ : PK_LOAD_MMAP, &m);
    pk_check_status(s, want, needle, __FILE__, __LINE__, label);
    if (s == PK_STATUS_OK) {
      pk_module_destroy(m);
      continue;
    }
    CHECK(m == kSentinel, "%s: *out changed by a failed load", label);
    CHECK(strstr(pk_last_error(), "broken.pocket") != NULL, "%s: error \"%s\" does not name the file",
          label, pk_last_error());
  }
  unlink(path);
}

static uint8_t* copy_of(const target* t) {
  uint8_t* b = (uint8_t*)malloc(t->size);
  memcpy(b, t->bytes, t->size);
  return b;
}

/* ------------------------------------------------------------------ files --------------- */

static void test_missing_and_empty(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/does_not_exist.pocket", g_tmp);
  for (int mode = 0; mode < 2; ++mode) {
    pk_module* m = kSentinel;
    CHECK_STATUS(pk_module_load_file(path, mode ? PK_LOAD_READ : PK_LOAD_MMAP, &m),
                 PK_STATUS_NOT_FOUND, "does_not_exist.pocket");
    CHECK(m == kSentinel, "missing file: *out changed");
  }
  /* A directory is not a program file. */
  pk_module* m = kSentinel;
  CHECK_STATUS(pk_module_load_file(g_tmp, PK_LOAD_MMAP, &m), PK_STATUS_IO, NULL);
  CHECK(m == kSentinel, "directory: *out changed");

  static const uint8_t nothing[1] = {0};
  expect_file(nothing, 0, PK_STATUS_INVALID_PROGRAM, "truncated", "empty file");
  expect_buffer(nothing, 0, PK_STATUS_INVALID_PROGRAM, "truncated", "empty buffer");
  expect_buffer(NULL, 0, PK_STATUS_INVALID_PROGRAM, "truncated", "NULL buffer of 0 bytes");
}

/* Smallest length >= lo at which the program loads (loading only gets easier with more
 * bytes, so a binary search finds it). */
static size_t needed_length(const target* t, size_t lo) {
  size_t hi = t->size;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    pk_module* m = NULL;
    if (pk_module_load_buffer(t->bytes, mid, &m) == PK_STATUS_OK) {
      pk_module_destroy(m);
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

static void test_truncated(const target* t) {
  char what[128];
  /* Inside the header or the flatbuffer: the header check must say "truncated". */
  size_t fb_end = 32 + (size_t)t->fb_size;
  size_t cuts[] = {1, 8, 16, 31, 32, 33, 32 + (size_t)t->fb_size / 2, fb_end - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    snprintf(what, sizeof what, "file truncated to %zu bytes (flatbuffer ends at %zu)", cuts[i], fb_end);
    expect_buffer(t->bytes, cuts[i], PK_STATUS_INVALID_PROGRAM, "truncated", what);
    if (i == 3 || i == 6) expect_file(t->bytes, cuts[i], PK_STATUS_INVALID_PROGRAM, "truncated", what);
  }
  /* Between the flatbuffer and the segments, and inside the segments. */
  if (t->segment_base > fb_end) {
    snprintf(what, sizeof what, "file truncated to %zu bytes, before segment base %llu", fb_end,
             (unsigned long long)t->segment_base);
    expect_buffer(t->bytes, fb_end, PK_STATUS_INVALID_PROGRAM, "segment", what);
  }
  size_t need = needed_length(t, (size_t)t->segment_base);
  CHECK(need <= t->size, "the untruncated program does not load");
  if (need > t->segment_base) {
    size_t seg_cuts[] = {(size_t)t->segment_base, (size_t)t->segment_base + (need - t->segment_base) / 2,
                         need - 1};
    for (size_t i = 0; i < 3; ++i) {
      snprintf(what, sizeof what, "file truncated to %zu bytes, inside the segments (%llu to %zu)",
               seg_cuts[i], (unsigned long long)t->segment_base, need);
      expect_buffer(t->bytes, seg_cuts[i], PK_STATUS_INVALID_PROGRAM, "segment", what);
      if (i == 1) expect_file(t->bytes, seg_cuts[i], PK_STATUS_INVALID_PROGRAM, "segment", what);
    }
  } else {
    printf("note: %s has no segment bytes; mid-segment truncation not tested\n", t->name);
  }
  /* Every length: a clean INVALID_PROGRAM below `need`, success from there on. */
  size_t step = t->size > 65536 ? t->size / 65536 : 1, bad_at = (size_t)-1;
  pk_status bad_status = PK_STATUS_OK;
  for (size_t n = 0; n < t->size && bad_at == (size_t)-1; n += step) {
    snprintf(g_case, sizeof g_case, "load_buffer of the first %zu bytes", n);
    pk_module* m = NULL;
    pk_status s = pk_module_load_buffer(t->bytes, n, &m);
    int ok = n < need ? (s == PK_STATUS_INVALID_PROGRAM && pk_last_error()[0] != '\0' && m == NULL)
                      : s == PK_STATUS_OK;
    if (!ok) bad_at = n, bad_status = s;
    pk_module_destroy(m);
  }
  CHECK(bad_at == (size_t)-1, "truncated to %zu bytes: status %s (\"%s\")", bad_at,
        pk_status_string(bad_status), pk_last_error());
}

/* ------------------------------------------------------------------ header fields ------- */

static void test_header(const target* t) {
  uint8_t* b = copy_of(t);
  b[0] ^= 0xFF;
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "magic", "wrong magic (byte 0)");
  expect_file(b, t->size, PK_STATUS_INVALID_PROGRAM, "magic", "wrong magic (byte 0)");
  b[0] ^= 0xFF;
  b[7] = 'X';
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "magic", "wrong magic (byte 7)");
  memcpy(b, t->bytes, t->size);

  wr32(b + 8, 99);
  expect_buffer(b, t->size, PK_STATUS_UNSUPPORTED, "99", "format version 99");
  expect_file(b, t->size, PK_STATUS_UNSUPPORTED, "version", "format version 99");
  wr32(b + 8, 0);
  expect_buffer(b, t->size, PK_STATUS_UNSUPPORTED, "version", "format version 0");
  wr32(b + 8, 0xFFFFFFFFu);
  expect_buffer(b, t->size, PK_STATUS_UNSUPPORTED, "version", "format version 2^32-1");
  memcpy(b, t->bytes, t->size);

  wr32(b + 12, 64);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "header", "header size 64");
  memcpy(b, t->bytes, t->size);

  wr64(b + 16, UINT64_MAX);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "truncated", "flatbuffer size 2^64-1");
  wr64(b + 16, t->size);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "truncated", "flatbuffer size = file size");
  wr64(b + 16, 0);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, NULL, "flatbuffer size 0");
  wr64(b + 16, t->fb_size / 2);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, NULL, "flatbuffer size halved");
  memcpy(b, t->bytes, t->size);

  wr64(b + 24, t->segment_base + 1);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "segment", "segment base not 64-aligned");
  wr64(b + 24, UINT64_MAX - 63);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "segment", "segment base 2^64-64");
  wr64(b + 24, 0);
  expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "segment", "segment base 0 (inside the header)");
  if (t->fb_size > 64) {
    wr64(b + 24, 64);
    expect_buffer(b, t->size, PK_STATUS_INVALID_PROGRAM, "segment", "segment base inside the flatbuffer");
  }
  free(b);
}

/* ------------------------------------------------------------------ corruption ---------- */

/* Statuses a broken file may produce at load, method load or execute. */
static int clean_failure(pk_status s) {
  return s != PK_STATUS_OK && s != PK_STATUS_INTERNAL && s >= PK_STATUS_INVALID_ARGUMENT &&
         s <= PK_STATUS_CANCELLED && pk_last_error()[0] != '\0';
}

/* Inputs for running `method` of a (possibly corrupted) program: the golden inputs when the
 * target has them for this method, else zeros at each input's smallest shape. 0 when there
 * are none that fit (small tensors only). */
static int make_inputs(pk_module* m, const target* t, const char* method, size_t n_in, pk_tensor** inputs) {
  if (t->has_io && strcmp(method, t->method) == 0)
    return n_in == t->io.n_inputs && pk_io_make_inputs(&t->io, inputs);
  for (size_t i = 0; i < n_in; ++i) {
    pk_dtype dtype;
    size_t ndim = 0, numel = 1;
    int64_t lo[8], hi[8];
    int ok = pk_module_input_info(m, method, i, &dtype, &ndim, lo, hi, 8) == PK_STATUS_OK;
    for (size_t d = 0; ok && d < ndim; ++d) {
      numel *= (size_t)lo[d];
      ok = lo[d] <= (1 << 20) && numel <= (1 << 20);
    }
    if (!ok || pk_tensor_create(dtype, lo, ndim, &inputs[i]) != PK_STATUS_OK) {
      for (size_t j = 0; j < i; ++j) pk_tensor_destroy(inputs[j]);
      return 0;
    }
  }
  return 1;
}

/* Uses a program that loaded despite corruption: every query and a run of every method (see
 * make_inputs) must succeed or fail cleanly. Returns 0 and describes the first unclean
 * result in `why`. */
static int exercise(pk_module* m, const target* t, char* why, size_t cap) {
  const char *key, *value;
  /* One thread: the sweep runs tens of thousands of programs, and under qemu-user every
   * started thread costs memory qemu does not give back (natively this test peaks at 12 MB). */
  pk_module_set_num_threads(m, 1);
  for (size_t i = 0; i < pk_module_metadata_count(m); ++i)
    if (pk_module_metadata_entry(m, i, &key, &value) != PK_STATUS_OK || key == NULL || value == NULL) {
      snprintf(why, cap, "metadata entry %zu: %s", i, pk_last_error());
      return 0;
    }
  for (size_t k = 0; k < pk_module_method_count(m); ++k) {
    const char* method = pk_module_method_name(m, k);
    size_t n_in = 0, n_out = 0;
    pk_status s = pk_module_input_count(m, method, &n_in);
    if (s != PK_STATUS_OK) {
      if (clean_failure(s)) continue;
      snprintf(why, cap, "method '%s' load: status %s, message \"%s\"", method, pk_status_string(s), pk_last_error());
      return 0;
    }
    if (pk_module_output_count(m, method, &n_out) != PK_STATUS_OK) {
      snprintf(why, cap, "method '%s' loaded but output_count failed: %s", method, pk_last_error());
      return 0;
    }
    for (size_t i = 0; i < n_in + n_out; ++i) {
      pk_dtype dtype;
      size_t ndim;
      int64_t lo[8], hi[8];
      s = i < n_in ? pk_module_input_info(m, method, i, &dtype, &ndim, lo, hi, 8)
                   : pk_module_output_info(m, method, i - n_in, &dtype, &ndim, lo, hi, 8);
      if (s != PK_STATUS_OK && !clean_failure(s)) {
        snprintf(why, cap, "method '%s' info %zu: status %s", method, i, pk_status_string(s));
        return 0;
      }
    }
    if (n_in > PK_IO_MAX_TENSORS || n_out > PK_IO_MAX_TENSORS) continue;
    pk_tensor* inputs[PK_IO_MAX_TENSORS];
    pk_tensor* outputs[PK_IO_MAX_TENSORS] = {0};
    if (!make_inputs(m, t, method, n_in, inputs)) continue;
    s = pk_module_execute(m, method, inputs, n_in, outputs, n_out);
    for (size_t i = 0; i < n_in; ++i) pk_tensor_destroy(inputs[i]);
    if (s == PK_STATUS_OK)
      for (size_t i = 0; i < n_out; ++i) pk_tensor_destroy(outputs[i]);
    else if (!clean_failure(s)) {
      snprintf(why, cap, "execute: status %s, message \"%s\"", pk_status_string(s), pk_last_error());
      return 0;
    }
  }
  return 1;
}

/* Loads a corrupted copy; returns 1 when it failed cleanly or loaded and ran cleanly. */
static int try_corrupted(const uint8_t* b, const target* t, char* why, size_t cap, int* loaded) {
  pk_module* m = NULL;
  pk_status s = pk_module_load_buffer(b, t->size, &m);
  if (s != PK_STATUS_OK) {
    if (clean_failure(s) && m == NULL) return 1;
    snprintf(why, cap, "load: status %s, message \"%s\"", pk_status_string(s), pk_last_error());
    return 0;
  }
  ++*loaded;
  int ok = exercise(m, t, why, cap);
  pk_module_destroy(m);
  return ok;
}

/* At most this many corrupted copies per program (environment PK_TEST_MAX_CORRUPTIONS; 0 or
 * unset: every byte), for slow emulators. The full sweep takes ~95 s under qemu-aarch64. */
static size_t g_max_copies = 0;

/* Corrupts every byte before the segments with `n_patterns` xor patterns (every
 * offset_step-th byte when g_max_copies is set), then `rounds` copies with 4 random bytes
 * changed, then flips bytes of the segments. */
static void test_corruption(const target* t, size_t n_patterns, int rounds) {
  static const uint8_t kPatterns[] = {0xFF, 0x01, 0x80, 0x7F};
  uint8_t* b = copy_of(t);
  char why[512];
  /* Every byte of the header and the flatbuffer (and padding), a few patterns each. */
  size_t end = (size_t)t->segment_base, failures = 0, tried = 0;
  int loaded = 0;
  size_t offset_step = 1, seg_copies = 4096;
  if (g_max_copies > 0) {
    size_t sweep = g_max_copies * 3 / 4 + 1;
    if (end / offset_step * n_patterns > sweep) offset_step = (end * n_patterns + sweep - 1) / sweep;
    if ((size_t)rounds > g_max_copies / 8) rounds = (int)(g_max_copies / 8);
    seg_copies = g_max_copies / 8 + 1;
  }
  for (size_t off = 0; off < end; off += offset_step)
    for (size_t p = 0; p < n_patterns && p < sizeof kPatterns; ++p) {
      b[off] ^= kPatterns[p];
      snprintf(g_case, sizeof g_case, "%s: byte %zu xor 0x%02x", t->name, off, kPatterns[p]);
      ++tried;
      if (!try_corrupted(b, t, why, sizeof why, &loaded) && failures++ < 10)
        CHECK(0, "%s: corrupted byte %zu (xor 0x%02x): %s", t->name, off, kPatterns[p], why);
      b[off] = t->bytes[off];
    }
  /* Several random bytes at once, deterministic. */
  uint32_t rng = 12345;
  for (int round = 0; round < rounds && end > 32; ++round) {
    for (int k = 0; k < 4; ++k) {
      rng = rng * 1664525u + 1013904223u;
      size_t off = 32 + (rng >> 8) % (end - 32);
      rng = rng * 1664525u + 1013904223u;
      b[off] = (uint8_t)(rng >> 24);
    }
    snprintf(g_case, sizeof g_case, "%s: random corruption round %d", t->name, round);
    ++tried;
    if (!try_corrupted(b, t, why, sizeof why, &loaded) && failures++ < 10)
      CHECK(0, "%s: random corruption round %d: %s", t->name, round, why);
    memcpy(b, t->bytes, t->size);
  }
  /* Segment bytes are raw data: flipping them must never break loading. */
  size_t seg_failures = 0;
  for (size_t off = end; off < t->size; off += 1 + (t->size - end) / seg_copies) {
    b[off] ^= 0xFF;
    snprintf(g_case, sizeof g_case, "%s: segment byte %zu xor 0xff", t->name, off);
    pk_module* m = NULL;
    if (pk_module_load_buffer(b, t->size, &m) != PK_STATUS_OK && seg_failures++ < 10)
      CHECK(0, "%s: flipping segment byte %zu made the load fail: %s", t->name, off, pk_last_error());
    pk_module_destroy(m);
    b[off] = t->bytes[off];
  }
  CHECK(failures == 0, "%s: %zu of %zu corrupted copies failed uncleanly (first 10 shown)", t->name, failures, tried);
  CHECK(seg_failures == 0, "%s: %zu segment corruptions failed to load", t->name, seg_failures);
  char every[48] = "every byte";
  if (offset_step > 1) snprintf(every, sizeof every, "every %zu bytes", offset_step);
  printf("corruption of %s: %zu corrupted copies (%s), %d still loaded, all handled cleanly: %s\n", t->name,
         tried, every, loaded, failures == 0 ? "yes" : "no");
  free(b);
}

/* ------------------------------------------------------------------ inputs and outputs -- */

/* Runs the target method; returns its status; destroys any outputs. */
static pk_status run(pk_module* m, const char* method, pk_tensor* const* inputs, size_t n_in,
                     size_t n_out) {
  pk_tensor* outputs[PK_IO_MAX_TENSORS + 2];
  for (size_t i = 0; i < PK_IO_MAX_TENSORS + 2; ++i) outputs[i] = (pk_tensor*)kSentinel;
  pk_status s = pk_module_execute(m, method, inputs, n_in, outputs, n_out);
  if (s == PK_STATUS_OK) {
    for (size_t i = 0; i < n_out; ++i) pk_tensor_destroy(outputs[i]);
  } else {
    int untouched = 1;
    for (size_t i = 0; i < PK_IO_MAX_TENSORS + 2; ++i) untouched &= outputs[i] == (pk_tensor*)kSentinel;
    CHECK(untouched, "failed execute (%s) wrote output slots", pk_status_string(s));
  }
  return s;
}

/* Golden run: checks the outputs against the .io values. */
static void run_golden(pk_module* m, const target* t, const char* when) {
  size_t n_in = t->io.n_inputs, n_out = t->io.n_outputs;
  pk_tensor* inputs[PK_IO_MAX_TENSORS];
  pk_tensor* outputs[PK_IO_MAX_TENSORS] = {0};
  if (!CHECK(pk_io_make_inputs(&t->io, inputs), "cannot make inputs: %s", pk_last_error())) return;
  pk_status s = pk_module_execute(m, t->method, inputs, n_in, outputs, n_out);
  if (CHECK(s == PK_STATUS_OK, "golden run %s: %s: %s", when, pk_status_string(s), pk_last_error()))
    for (size_t i = 0; i < n_out; ++i) {
      char why[256] = "";
      CHECK(pk_compare_tensor(outputs[i], &t->io.t[n_in + i], why, sizeof why), "golden run %s: output %zu: %s",
            when, i, why);
      pk_tensor_destroy(outputs[i]);
    }
  for (size_t i = 0; i < n_in; ++i) pk_tensor_destroy(inputs[i]);
}

static void test_inputs(pk_module* m, const target* t) {
  const char* method = t->method;
  size_t n_in = t->io.n_inputs, n_out = t->io.n_outputs;
  pk_tensor* inputs[PK_IO_MAX_TENSORS + 1];
  if (!CHECK(pk_io_make_inputs(&t->io, inputs), "cannot make inputs: %s", pk_last_error())) return;
  run_golden(m, t, "before the bad calls");

  if (n_in > 0) {
    snprintf(g_case, sizeof g_case, "too few inputs");
    CHECK_STATUS(run(m, method, inputs, n_in - 1, n_out), PK_STATUS_INVALID_ARGUMENT, "inputs");
  }
  inputs[n_in] = n_in > 0 ? inputs[0] : NULL;
  if (n_in == 0) pk_tensor_create(PK_DTYPE_FLOAT32, NULL, 0, &inputs[0]);
  snprintf(g_case, sizeof g_case, "too many inputs");
  CHECK_STATUS(run(m, method, inputs, n_in + 1, n_out), PK_STATUS_INVALID_ARGUMENT, "inputs");
  if (n_in == 0) pk_tensor_destroy(inputs[0]);

  snprintf(g_case, sizeof g_case, "unknown method");
  CHECK_STATUS(run(m, "pocket_test_no_such_method", inputs, n_in, n_out), PK_STATUS_NOT_FOUND,
               "pocket_test_no_such_method");

  if (n_in > 0) {
    const pk_io_tensor* x = &t->io.t[0];
    pk_tensor* saved = inputs[0];
    pk_tensor* bad = NULL;
    char name[32];
    snprintf(name, sizeof name, "input 0");

    /* wrong dtype, same shape */
    pk_dtype other = x->dtype == PK_DTYPE_FLOAT32 ? PK_DTYPE_INT32 : PK_DTYPE_FLOAT32;
    CHECK_STATUS(pk_tensor_create(other, x->shape, x->ndim, &bad), PK_STATUS_OK, NULL);
    inputs[0] = bad;
    snprintf(g_case, sizeof g_case, "wrong dtype");
    CHECK_STATUS(run(m, method, inputs, n_in, n_out), PK_STATUS_INVALID_ARGUMENT, "dtype");
    CHECK(strstr(pk_last_error(), name) != NULL, "wrong dtype: error \"%s\" does not name %s",
          pk_last_error(), name);
    pk_tensor_destroy(bad);

    /* wrong rank */
    int64_t shape[9];
    memcpy(shape, x->shape, sizeof(int64_t) * x->ndim);
    size_t ndim = x->ndim < 8 ? x->ndim + 1 : x->ndim - 1;
    if (x->ndim < 8) shape[x->ndim] = 1;
    CHECK_STATUS(pk_tensor_create(x->dtype, shape, ndim, &bad), PK_STATUS_OK, NULL);
    inputs[0] = bad;
    snprintf(g_case, sizeof g_case, "wrong rank");
    CHECK_STATUS(run(m, method, inputs, n_in, n_out), PK_STATUS_INVALID_ARGUMENT, "dims");
    CHECK(strstr(pk_last_error(), name) != NULL, "wrong rank: error \"%s\" does not name %s",
          pk_last_error(), name);
    pk_tensor_destroy(bad);

    /* sizes outside the exported bounds */
    pk_dtype dtype;
    int64_t lo[8], hi[8];
    if (x->ndim > 0 &&
        CHECK_STATUS(pk_module_input_info(m, method, 0, &dtype, &ndim, lo, hi, 8), PK_STATUS_OK, NULL)) {
      for (size_t d = 0; d < x->ndim; ++d) {
        for (int side = 0; side < 2; ++side) {
          if (side == 0 && lo[d] == 0) continue;
          memcpy(shape, x->shape, sizeof(int64_t) * x->ndim);
          shape[d] = side == 0 ? lo[d] - 1 : hi[d] + 1;
          CHECK_STATUS(pk_tensor_create(x->dtype, shape, x->ndim, &bad), PK_STATUS_OK, NULL);
          inputs[0] = bad;
          char needle[32];
          snprintf(needle, sizeof needle, "dim %zu", d);
          snprintf(g_case, sizeof g_case, "input 0 %s out of bounds", needle);
          CHECK_STATUS(run(m, method, inputs, n_in, n_out), PK_STATUS_INVALID_ARGUMENT, needle);
          pk_tensor_destroy(bad);
        }
      }
    }

    /* a NULL input */
    inputs[0] = NULL;
    snprintf(g_case, sizeof g_case, "NULL input");
    CHECK_STATUS(run(m, method, inputs, n_in, n_out), PK_STATUS_INVALID_ARGUMENT, "input 0");
    inputs[0] = saved;
  }

  /* output slot count */
  snprintf(g_case, sizeof g_case, "output slots");
  CHECK_STATUS(run(m, method, inputs, n_in, n_out + 1), PK_STATUS_INVALID_ARGUMENT, "output");
  if (n_out > 0) {
    CHECK_STATUS(run(m, method, inputs, n_in, n_out - 1), PK_STATUS_INVALID_ARGUMENT, "output");
    CHECK_STATUS(pk_module_execute(m, method, inputs, n_in, NULL, n_out), PK_STATUS_INVALID_ARGUMENT,
                 "outputs");
  }
  if (n_in > 0)
    CHECK_STATUS(pk_module_execute(m, method, NULL, n_in, NULL, n_out), PK_STATUS_INVALID_ARGUMENT, NULL);

  for (size_t i = 0; i < n_in; ++i) pk_tensor_destroy(inputs[i]);
  run_golden(m, t, "after the bad calls");
}

/* ------------------------------------------------------------------ NULL arguments ------ */

static void test_null_arguments(pk_module* m, const target* t) {
  const char* method = t->method;
  size_t n = 7;
  const char *key = "k", *value = "v";
  pk_dtype dtype = PK_DTYPE_BOOL;
  int64_t lo[8], hi[8];
  pk_tensor* out_tensor = (pk_tensor*)kSentinel;
  snprintf(g_case, sizeof g_case, "NULL arguments");

  CHECK(pk_status_string((pk_status)-1) != NULL && pk_status_string((pk_status)1000) != NULL,
        "pk_status_string of an unknown status is NULL");
  for (int s = 0; s <= PK_STATUS_CANCELLED; ++s)
    CHECK(pk_status_string((pk_status)s)[0] != '\0', "pk_status_string(%d) is empty", s);
  CHECK(pk_last_error() != NULL, "pk_last_error() is NULL");
  CHECK(pk_dtype_size((pk_dtype)42) == 0, "pk_dtype_size(42) is not 0");
  CHECK(pk_dtype_name((pk_dtype)42) != NULL, "pk_dtype_name(42) is NULL");
  CHECK(pk_dtype_size((pk_dtype)-1) == 0, "pk_dtype_size(-1) is not 0");

  /* destroy functions accept NULL */
  pk_module_destroy(NULL);
  pk_tensor_destroy(NULL);

  /* tensors */
  int64_t shape[2] = {2, 3};
  float data[6] = {0};
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, shape, 2, NULL), PK_STATUS_INVALID_ARGUMENT, "out");
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, NULL, 2, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "shape");
  CHECK_STATUS(pk_tensor_create((pk_dtype)42, shape, 2, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "dtype");
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, shape, 9, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "dims");
  int64_t negative[2] = {2, -3};
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, negative, 2, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "negative");
  int64_t huge[2] = {INT64_MAX, INT64_MAX};
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, huge, 2, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "large");
  /* An empty dim does not let the others grow without bound (their strides would overflow):
     shapes from callers are checked as the loader checks a file's. */
  int64_t empty_but_wide[3] = {0, (int64_t)1 << 30, (int64_t)1 << 30};
  CHECK_STATUS(pk_tensor_create(PK_DTYPE_FLOAT32, empty_but_wide, 3, &out_tensor), PK_STATUS_INVALID_ARGUMENT, "large");
  CHECK_STATUS(pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, shape, 2, NULL, sizeof data, &out_tensor),
               PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, shape, 2, data, sizeof data - 1, &out_tensor),
               PK_STATUS_INVALID_ARGUMENT, "bytes");
  CHECK_STATUS(pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, shape, 2, data, sizeof data, NULL),
               PK_STATUS_INVALID_ARGUMENT, "out");
  CHECK(out_tensor == (pk_tensor*)kSentinel, "failed tensor creation wrote *out");
  CHECK(pk_tensor_ndim(NULL) == 0 && pk_tensor_shape(NULL) == NULL && pk_tensor_numel(NULL) == 0 &&
            pk_tensor_nbytes(NULL) == 0 && pk_tensor_data(NULL) == NULL,
        "tensor getters on NULL");
  (void)pk_tensor_dtype(NULL);

  /* loading */
  pk_module* mod = kSentinel;
  CHECK_STATUS(pk_module_load_file(NULL, PK_LOAD_MMAP, &mod), PK_STATUS_INVALID_ARGUMENT, NULL);
  char path[600];
  snprintf(path, sizeof path, "%s/%s.pocket", g_dir, t->name);
  CHECK_STATUS(pk_module_load_file(path, PK_LOAD_MMAP, NULL), PK_STATUS_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(pk_module_load_file(path, PK_LOAD_READ, NULL), PK_STATUS_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(pk_module_load_buffer(NULL, t->size, &mod), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_load_buffer(t->bytes, t->size, NULL), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK(mod == kSentinel, "failed load wrote *out");

  /* module queries */
  CHECK_STATUS(pk_module_set_num_threads(NULL, 1), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_set_num_threads(m, -1), PK_STATUS_INVALID_ARGUMENT, "num_threads");
  CHECK(pk_module_method_count(NULL) == 0, "method_count(NULL) is not 0");
  CHECK(pk_module_method_name(NULL, 0) == NULL, "method_name(NULL, 0) is not NULL");
  CHECK(pk_module_method_name(m, (size_t)-1) == NULL, "method_name(m, SIZE_MAX) is not NULL");
  CHECK(pk_module_metadata_count(NULL) == 0, "metadata_count(NULL) is not 0");
  CHECK_STATUS(pk_module_metadata_entry(NULL, 0, &key, &value), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_metadata_entry(m, 0, NULL, &value), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_metadata_entry(m, 0, &key, NULL), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_metadata_entry(m, (size_t)-1, &key, &value), PK_STATUS_OUT_OF_RANGE, "metadata");
  CHECK_STATUS(pk_module_metadata_get(NULL, "k", &value), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_metadata_get(m, NULL, &value), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_metadata_get(m, "k", NULL), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK(strcmp(key, "k") == 0 && strcmp(value, "v") == 0, "failed metadata calls wrote out-parameters");

  CHECK_STATUS(pk_module_input_count(NULL, method, &n), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_input_count(m, NULL, &n), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_input_count(m, method, NULL), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_input_count(m, "pocket_test_no_such_method", &n), PK_STATUS_NOT_FOUND,
               "pocket_test_no_such_method");
  CHECK_STATUS(pk_module_output_count(NULL, method, &n), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_output_count(m, NULL, &n), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_output_count(m, method, NULL), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_output_count(m, "pocket_test_no_such_method", &n), PK_STATUS_NOT_FOUND,
               "pocket_test_no_such_method");
  CHECK(n == 7, "failed count calls wrote *out");

  size_t ndim = 99;
  CHECK_STATUS(pk_module_input_info(NULL, method, 0, &dtype, &ndim, lo, hi, 8), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_input_info(m, NULL, 0, &dtype, &ndim, lo, hi, 8), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_output_info(NULL, method, 0, &dtype, &ndim, lo, hi, 8), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_output_info(m, NULL, 0, &dtype, &ndim, lo, hi, 8), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_input_info(m, method, (size_t)-1, &dtype, &ndim, lo, hi, 8), PK_STATUS_OUT_OF_RANGE, "input");
  CHECK_STATUS(pk_module_output_info(m, method, (size_t)-1, &dtype, &ndim, lo, hi, 8), PK_STATUS_OUT_OF_RANGE, "output");
  if (t->io.n_inputs > 0 && t->io.t[0].ndim > 0) {
    CHECK_STATUS(pk_module_input_info(m, method, 0, &dtype, &ndim, NULL, hi, 8), PK_STATUS_INVALID_ARGUMENT, NULL);
    CHECK_STATUS(pk_module_input_info(m, method, 0, &dtype, &ndim, lo, NULL, 8), PK_STATUS_INVALID_ARGUMENT, NULL);
    CHECK_STATUS(pk_module_input_info(m, method, 0, &dtype, &ndim, lo, hi, t->io.t[0].ndim - 1),
                 PK_STATUS_INVALID_ARGUMENT, "dims");
  }
  CHECK(dtype == PK_DTYPE_BOOL && ndim == 99, "failed info calls wrote out-parameters");
  /* dtype and ndim may be NULL */
  if (t->io.n_inputs > 0)
    CHECK_STATUS(pk_module_input_info(m, method, 0, NULL, NULL, lo, hi, 8), PK_STATUS_OK, NULL);

  pk_tensor* outputs[PK_IO_MAX_TENSORS] = {0};
  CHECK_STATUS(pk_module_execute(NULL, method, NULL, 0, outputs, t->io.n_outputs), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_execute(m, NULL, NULL, 0, outputs, t->io.n_outputs), PK_STATUS_INVALID_ARGUMENT, "NULL");

  size_t count = 0;
  CHECK_STATUS(pk_module_set_profiling(NULL, 1), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_profile(NULL, method, NULL, 0, &count), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_set_profiling(m, 1), PK_STATUS_OK, NULL);
  CHECK_STATUS(pk_module_profile(m, NULL, NULL, 0, &count), PK_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(pk_module_profile(m, "no_such_method", NULL, 0, &count), PK_STATUS_NOT_FOUND, "no_such_method");
  CHECK_STATUS(pk_module_set_profiling(m, 0), PK_STATUS_OK, NULL);
}

/* ------------------------------------------------------------------ main ---------------- */

static void make_tmp_dir(void) {
  const char* base = getenv("TMPDIR");
  snprintf(g_tmp, sizeof g_tmp, "%s/pocket_errors_XXXXXX", base && base[0] ? base : "/tmp");
  if (mkdtemp(g_tmp) == NULL) {
    fprintf(stderr, "cannot create a scratch directory %s\n", g_tmp);
    exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  install_crash_handlers();
  const char* max_copies = getenv("PK_TEST_MAX_CORRUPTIONS");
  if (max_copies != NULL) g_max_copies = (size_t)strtoul(max_copies, NULL, 10);
  make_tmp_dir();
  size_t count = 0;
  target* main_target = NULL;
  target* targets = read_targets(&count, &main_target);
  if (main_target != NULL) {
    const target* t = main_target;
    test_missing_and_empty();
    test_truncated(t);
    test_header(t);
    /* Every program: a broken file must never crash, whatever structures it holds. */
    for (size_t i = 0; i < count; ++i)
      test_corruption(&targets[i], &targets[i] == t ? 4 : 2, &targets[i] == t ? 2000 : 500);
    pk_module* m = NULL;
    if (CHECK_STATUS(pk_module_load_buffer(t->bytes, t->size, &m), PK_STATUS_OK, NULL)) {
      test_inputs(m, t);
      test_null_arguments(m, t);
      pk_module_destroy(m);
    }
  }
  for (size_t i = 0; i < count; ++i) free_target(&targets[i]);
  free(targets);
  rmdir(g_tmp);
  return pk_test_finish();
}
