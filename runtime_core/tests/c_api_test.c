/* Golden test of the C API (pocket.h only, C11): every DIR/<name>.pocket is loaded three ways
 * (file with PK_LOAD_MMAP, file with PK_LOAD_READ, pk_module_load_buffer), its methods,
 * metadata and input/output info are queried, and every method with a DIR/<name>.<method>.io
 * file is run and its outputs compared with the expected values (format in pk_test.h).
 *
 *   c_api_test tests/golden
 *
 * Ends with "N passed, M failed"; exits non-zero when a check failed or DIR holds no program.
 */
#include "pk_test.h"

enum { kLoadMmap, kLoadRead, kLoadBuffer, kLoadKinds };
static const char* const kLoadNames[kLoadKinds] = {"file/mmap", "file/read", "buffer"};

static const char* g_dir;
static int g_methods_run = 0;

/* Loads program `name` the `how`-th way; NULL (after recording a failure) when it fails. */
static pk_module* load(const char* name, const uint8_t* bytes, size_t size, int how) {
  char file[512];
  snprintf(file, sizeof file, "%s.pocket", name);
  char* path = pk_join(g_dir, file);
  pk_module* m = NULL;
  pk_status s;
  if (how == kLoadBuffer) {
    /* Start the bytes at an odd address: the module must copy them into aligned memory. */
    uint8_t* odd = (uint8_t*)malloc(size + 1);
    memcpy(odd + 1, bytes, size);
    s = pk_module_load_buffer(odd + 1, size, &m);
    free(odd);
  } else {
    s = pk_module_load_file(path, how == kLoadMmap ? PK_LOAD_MMAP : PK_LOAD_READ, &m);
  }
  free(path);
  if (!CHECK(s == PK_STATUS_OK && m != NULL, "%s: load via %s failed: %s: %s", name,
             kLoadNames[how], pk_status_string(s), pk_last_error()))
    return NULL;
  CHECK(pk_last_error()[0] == '\0', "%s: pk_last_error() is \"%s\" after a successful load", name,
        pk_last_error());
  return m;
}

static void check_metadata(pk_module* m, const char* name) {
  size_t n = pk_module_metadata_count(m);
  for (size_t i = 0; i < n; ++i) {
    const char *key = NULL, *value = NULL, *again = NULL;
    if (!CHECK_STATUS(pk_module_metadata_entry(m, i, &key, &value), PK_STATUS_OK, NULL)) continue;
    if (!CHECK(key != NULL && value != NULL, "%s: metadata entry %zu is NULL", name, i)) continue;
    CHECK_STATUS(pk_module_metadata_get(m, key, &again), PK_STATUS_OK, NULL);
    CHECK(again != NULL && strcmp(again, value) == 0, "%s: metadata_get('%s') is '%s', entry says '%s'",
          name, key, again ? again : "(null)", value);
  }
  const char *key = "untouched", *value = "untouched";
  CHECK_STATUS(pk_module_metadata_entry(m, n, &key, &value), PK_STATUS_OUT_OF_RANGE, NULL);
  CHECK_STATUS(pk_module_metadata_get(m, "pocket.test.no_such_key", &value), PK_STATUS_NOT_FOUND,
               "pocket.test.no_such_key");
  CHECK(strcmp(key, "untouched") == 0 && strcmp(value, "untouched") == 0,
        "%s: out-parameters changed by failing metadata calls", name);
}

/* Queries one input or output's info and checks it is plausible. */
static void check_info(pk_module* m, const char* name, const char* method, size_t i, int input) {
  pk_dtype dtype = (pk_dtype)-1;
  size_t ndim = 99;
  int64_t lo[8], hi[8];
  pk_status s = input ? pk_module_input_info(m, method, i, &dtype, &ndim, lo, hi, 8)
                      : pk_module_output_info(m, method, i, &dtype, &ndim, lo, hi, 8);
  const char* what = input ? "input" : "output";
  if (!CHECK(s == PK_STATUS_OK, "%s.%s %s %zu info: %s: %s", name, method, what, i,
             pk_status_string(s), pk_last_error()))
    return;
  CHECK(pk_dtype_size(dtype) > 0, "%s.%s %s %zu: dtype %d", name, method, what, i, (int)dtype);
  if (!CHECK(ndim <= 8, "%s.%s %s %zu: ndim %zu", name, method, what, i, ndim)) return;
  for (size_t d = 0; d < ndim; ++d)
    CHECK(lo[d] >= 0 && lo[d] <= hi[d], "%s.%s %s %zu dim %zu: bounds [%lld, %lld]", name, method,
          what, i, d, (long long)lo[d], (long long)hi[d]);
}

/* Checks that the .io inputs fit the method's input info (a check on the golden file). */
static void check_io_fits(pk_module* m, const char* name, const char* method, const pk_io* io) {
  for (size_t i = 0; i < io->n_inputs; ++i) {
    pk_dtype dtype;
    size_t ndim = 0;
    int64_t lo[8], hi[8];
    if (pk_module_input_info(m, method, i, &dtype, &ndim, lo, hi, 8) != PK_STATUS_OK) continue;
    const pk_io_tensor* t = &io->t[i];
    int fits = dtype == t->dtype && ndim == t->ndim;
    for (size_t d = 0; fits && d < ndim; ++d) fits = t->shape[d] >= lo[d] && t->shape[d] <= hi[d];
    CHECK(fits, "%s.%s: golden input %zu does not match the method's input info", name, method, i);
  }
}

/* Runs `method` on the inputs of <name>.<method>.io and compares the outputs. */
/* The last load kind runs with profiling on: after the method's one run, every instruction
 * has one call, an op name and a source string. The other kinds run with it off, where
 * reading a profile is an error. */
static const int kProfiledLoad = kLoadKinds - 1;

static void check_profile(pk_module* m, const char* file, const char* method, int how) {
  size_t count = 0;
  if (how != kProfiledLoad) {
    CHECK_STATUS(pk_module_profile(m, method, NULL, 0, &count), PK_STATUS_INVALID_ARGUMENT, "profiling is off");
    return;
  }
  CHECK_STATUS(pk_module_profile(m, method, NULL, 0, NULL), PK_STATUS_INVALID_ARGUMENT, "count is NULL");
  CHECK_STATUS(pk_module_profile(m, method, NULL, 1, &count), PK_STATUS_INVALID_ARGUMENT, "entries is NULL");
  if (!CHECK_STATUS(pk_module_profile(m, method, NULL, 0, &count), PK_STATUS_OK, NULL)) return;
  if (!CHECK(count > 0, "%s: the profile has no instructions", file)) return;
  pk_profile_entry* entries = (pk_profile_entry*)calloc(count, sizeof *entries);
  size_t again = 0;
  CHECK_STATUS(pk_module_profile(m, method, entries, count, &again), PK_STATUS_OK, NULL);
  CHECK(again == count, "%s: profile of %zu entries, then %zu", file, count, again);
  uint64_t ns = 0;
  for (size_t i = 0; i < count; ++i) {
    CHECK(entries[i].op != NULL && entries[i].op[0] != '\0' && entries[i].source != NULL && entries[i].layer != NULL,
          "%s: profile entry %zu has no op, source or layer", file, i);
    CHECK(entries[i].calls == 1, "%s: instruction %zu (%s) ran %llu times in one run", file, i,
          entries[i].op ? entries[i].op : "?", (unsigned long long)entries[i].calls);
    ns += entries[i].nanoseconds;
  }
  CHECK(ns > 0, "%s: the profiled run took 0 ns", file);
  free(entries);
}

static void run_golden(pk_module* m, const char* name, const char* method, int how) {
  char file[512];
  snprintf(file, sizeof file, "%s.%s.io", name, method);
  char* path = pk_join(g_dir, file);
  size_t size = 0;
  uint8_t* bytes = pk_read_file(path, &size);
  free(path);
  if (bytes == NULL) return; /* no golden data for this method */
  pk_io io;
  const char* bad = pk_io_parse(bytes, size, &io);
  free(bytes);
  if (!CHECK(bad == NULL, "%s: malformed: %s", file, bad)) {
    pk_io_free(&io);
    return;
  }
  size_t n_in = 0, n_out = 0;
  CHECK_STATUS(pk_module_input_count(m, method, &n_in), PK_STATUS_OK, NULL);
  CHECK_STATUS(pk_module_output_count(m, method, &n_out), PK_STATUS_OK, NULL);
  if (!CHECK(n_in == io.n_inputs && n_out == io.n_outputs,
             "%s: %zu inputs / %zu outputs, the method has %zu / %zu", file, io.n_inputs,
             io.n_outputs, n_in, n_out)) {
    pk_io_free(&io);
    return;
  }
  check_io_fits(m, name, method, &io);
  pk_tensor* inputs[PK_IO_MAX_TENSORS];
  pk_tensor* outputs[PK_IO_MAX_TENSORS] = {0};
  if (!CHECK(pk_io_make_inputs(&io, inputs), "%s: cannot make input tensors: %s", file,
             pk_last_error())) {
    pk_io_free(&io);
    return;
  }
  pk_status s = pk_module_execute(m, method, inputs, n_in, outputs, n_out);
  if (CHECK(s == PK_STATUS_OK, "%s via %s: execute failed: %s: %s", file, kLoadNames[how],
            pk_status_string(s), pk_last_error())) {
    ++g_methods_run;
    check_profile(m, file, method, how);
    for (size_t i = 0; i < n_out; ++i) {
      char why[256] = "";
      CHECK(outputs[i] != NULL && pk_compare_tensor(outputs[i], &io.t[n_in + i], why, sizeof why),
            "%s via %s: output %zu: %s", file, kLoadNames[how], i, outputs[i] ? why : "NULL");
      pk_tensor_destroy(outputs[i]);
    }
  }
  for (size_t i = 0; i < n_in; ++i) pk_tensor_destroy(inputs[i]);
  pk_io_free(&io);
}

static void check_method(pk_module* m, const char* name, const char* method, int how) {
  size_t n_in = 0, n_out = 0;
  if (!CHECK_STATUS(pk_module_input_count(m, method, &n_in), PK_STATUS_OK, NULL)) return;
  CHECK_STATUS(pk_module_output_count(m, method, &n_out), PK_STATUS_OK, NULL);
  for (size_t i = 0; i < n_in; ++i) check_info(m, name, method, i, 1);
  for (size_t i = 0; i < n_out; ++i) check_info(m, name, method, i, 0);
  pk_dtype dtype = PK_DTYPE_BOOL;
  int64_t lo[8], hi[8];
  CHECK_STATUS(pk_module_input_info(m, method, n_in, &dtype, NULL, lo, hi, 8), PK_STATUS_OUT_OF_RANGE, "input");
  CHECK_STATUS(pk_module_output_info(m, method, n_out, &dtype, NULL, lo, hi, 8), PK_STATUS_OUT_OF_RANGE, "output");
  CHECK(dtype == PK_DTYPE_BOOL, "%s.%s: out-parameter changed by a failing info call", name, method);
  run_golden(m, name, method, how);
}

static void check_program(const char* name) {
  char file[512];
  snprintf(file, sizeof file, "%s.pocket", name);
  char* path = pk_join(g_dir, file);
  size_t size = 0;
  uint8_t* bytes = pk_read_file(path, &size);
  free(path);
  if (!CHECK(bytes != NULL, "cannot read %s/%s", g_dir, file)) return;
  size_t n_methods = 0;
  for (int how = 0; how < kLoadKinds; ++how) {
    pk_module* m = load(name, bytes, size, how);
    if (m == NULL) continue;
    size_t n = pk_module_method_count(m);
    CHECK(n > 0, "%s: no methods", name);
    CHECK(how == 0 || n == n_methods, "%s: %zu methods via %s, %zu via %s", name, n,
          kLoadNames[how], n_methods, kLoadNames[0]);
    n_methods = n;
    CHECK(pk_module_method_name(m, n) == NULL, "%s: method_name(%zu) is not NULL", name, n);
    CHECK_STATUS(pk_module_set_num_threads(m, 1), PK_STATUS_OK, NULL);
    if (how == kProfiledLoad) CHECK_STATUS(pk_module_set_profiling(m, 1), PK_STATUS_OK, NULL);
    check_metadata(m, name);
    for (size_t i = 0; i < n; ++i) {
      const char* method = pk_module_method_name(m, i);
      if (CHECK(method != NULL && method[0] != '\0', "%s: method %zu has no name", name, i))
        check_method(m, name, method, how);
    }
    pk_module_destroy(m);
  }
  free(bytes);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  CHECK(pk_api_version() == PK_API_VERSION, "pk_api_version() is %d, header says %d",
        pk_api_version(), PK_API_VERSION);
  size_t count = 0;
  char** names = pk_list_programs(g_dir, &count);
  if (names == NULL || count == 0) {
    CHECK(0, "no golden programs in %s (expected <name>.pocket files, made by "
             "tests/golden/make_golden.py)", g_dir);
    pk_free_names(names, count);
    return pk_test_finish();
  }
  for (size_t i = 0; i < count; ++i) {
    int failed = g_failed;
    check_program(names[i]);
    printf("%-40s %s\n", names[i], g_failed == failed ? "ok" : "FAILED");
  }
  CHECK(g_methods_run > 0, "no <name>.<method>.io files in %s: nothing was executed", g_dir);
  printf("%d golden method runs\n", g_methods_run);
  pk_free_names(names, count);
  return pk_test_finish();
}
