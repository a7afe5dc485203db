/* Helpers shared by the C API tests (C11 + POSIX, header only): check counters, file and
 * directory reading, the .io golden-data format and output comparison.
 *
 * .io files (little-endian), written next to each golden program as <name>.<method>.io:
 *   u32 magic 0x4F494B50 ("PKIO"), u32 n_inputs, u32 n_outputs,
 *   then n_inputs + n_outputs tensors, each: u32 dtype (pk_dtype number), u32 ndim,
 *   i64 dims[ndim], raw contiguous data (numel * element size bytes).
 */
#ifndef POCKET_TESTS_PK_TEST_H_
#define POCKET_TESTS_PK_TEST_H_

#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pocket/pocket.h"

/* ------------------------------------------------------------------ checks -------------- */

static int g_passed = 0;
static int g_failed = 0;

/* Records one check; on failure prints where and a printf-style explanation. */
static inline int pk_check(int ok, const char* file, int line, const char* fmt, ...) {
  if (ok) {
    ++g_passed;
    return 1;
  }
  ++g_failed;
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputc('\n', stderr);
  return 0;
}

#define CHECK(cond, ...) pk_check((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)

/* Checks that a call returned `want`; on success of a failing call, also that pk_last_error()
 * is non-empty and (when `needle` is not NULL) mentions `needle` (case-sensitive). */
static inline int pk_check_status(pk_status got, pk_status want, const char* needle, const char* file,
                           int line, const char* what) {
  if (got != want)
    return pk_check(0, file, line, "%s: status %s, expected %s (last error: \"%s\")", what,
                    pk_status_string(got), pk_status_string(want), pk_last_error());
  if (want == PK_STATUS_OK) return pk_check(1, file, line, "");
  const char* msg = pk_last_error();
  if (msg == NULL || msg[0] == '\0')
    return pk_check(0, file, line, "%s: failed with %s but pk_last_error() is empty", what,
                    pk_status_string(got));
  if (needle != NULL && strstr(msg, needle) == NULL)
    return pk_check(0, file, line, "%s: error \"%s\" does not mention \"%s\"", what, msg, needle);
  return pk_check(1, file, line, "");
}

#define CHECK_STATUS(call, want, needle) \
  pk_check_status((call), (want), (needle), __FILE__, __LINE__, #call)

/* Prints the closing line every test ends with and returns the exit code. */
static inline int pk_test_finish(void) {
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ files --------------- */

/* Reads a whole file into malloc'ed memory (*size bytes). NULL when it cannot be read. */
static inline uint8_t* pk_read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t* buf = (uint8_t*)malloc(cap);
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    uint8_t* grown = (uint8_t*)realloc(buf, cap);
    if (grown == NULL) free(buf);
    buf = grown;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  *size = n;
  return buf;
}

static inline int pk_write_file(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  size_t n = size ? fwrite(data, 1, size, f) : 0;
  return (fclose(f) == 0) && n == size;
}

static inline char* pk_strdup(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = (char*)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* "dir/name" in a malloc'ed string. */
static inline char* pk_join(const char* dir, const char* name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char* p = (char*)malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static inline int pk_cmp_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Sorted names (without the extension) of the *.pocket files in `dir`; *count receives how
 * many. Returns NULL when the directory cannot be read. Free with pk_free_names. */
static inline char** pk_list_programs(const char* dir, size_t* count) {
  DIR* d = opendir(dir);
  if (d == NULL) return NULL;
  size_t n = 0, cap = 16;
  char** names = (char**)malloc(cap * sizeof *names);
  struct dirent* e;
  while (names != NULL && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 7 || strcmp(e->d_name + len - 7, ".pocket") != 0) continue;
    if (n == cap) {
      cap *= 2;
      char** grown = (char**)realloc(names, cap * sizeof *names);
      if (grown == NULL) break;
      names = grown;
    }
    names[n] = pk_strdup(e->d_name);
    if (names[n]) names[n++][len - 7] = '\0';
  }
  closedir(d);
  if (names) qsort(names, n, sizeof *names, pk_cmp_names);
  *count = n;
  return names;
}

static inline void pk_free_names(char** names, size_t count) {
  for (size_t i = 0; names && i < count; ++i) free(names[i]);
  free(names);
}

/* ------------------------------------------------------------------ .io files ----------- */

#define PK_IO_MAGIC 0x4F494B50u
#define PK_IO_MAX_TENSORS 64

typedef struct pk_io_tensor {
  pk_dtype dtype;
  size_t ndim;
  int64_t shape[8];
  size_t nbytes;
  void* data; /* points into pk_io.bytes */
} pk_io_tensor;

typedef struct pk_io {
  uint8_t* bytes;
  size_t n_inputs, n_outputs;
  pk_io_tensor t[PK_IO_MAX_TENSORS]; /* inputs, then outputs */
} pk_io;

static inline uint32_t pk_le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline int64_t pk_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return (int64_t)v;
}

/* Parses an .io file into `io` (release with pk_io_free). Returns NULL on success, else what
 * is malformed. Data is copied to 64-byte aligned memory so tensors can borrow it. */
static inline const char* pk_io_parse(const uint8_t* b, size_t size, pk_io* io) {
  memset(io, 0, sizeof *io);
  if (size < 12 || pk_le32(b) != PK_IO_MAGIC) return "bad magic or too short";
  io->n_inputs = pk_le32(b + 4);
  io->n_outputs = pk_le32(b + 8);
  if (io->n_inputs + io->n_outputs > PK_IO_MAX_TENSORS) return "too many tensors";
  /* Aligned copy: every tensor's data at a 64-byte boundary. */
  size_t cap = size + 64 * (io->n_inputs + io->n_outputs + 1);
  void* mem = NULL;
  if (posix_memalign(&mem, 64, cap) != 0) return "out of memory";
  io->bytes = (uint8_t*)mem;
  size_t pos = 12, out = 0;
  for (size_t k = 0; k < io->n_inputs + io->n_outputs; ++k) {
    pk_io_tensor* t = &io->t[k];
    if (size - pos < 8) return "truncated tensor header";
    t->dtype = (pk_dtype)pk_le32(b + pos);
    t->ndim = pk_le32(b + pos + 4);
    pos += 8;
    if (pk_dtype_size(t->dtype) == 0) return "unknown dtype";
    if (t->ndim > 8) return "more than 8 dims";
    if ((size - pos) / 8 < t->ndim) return "truncated dims";
    size_t numel = 1;
    for (size_t d = 0; d < t->ndim; ++d) {
      t->shape[d] = pk_le64(b + pos + 8 * d);
      if (t->shape[d] < 0 || t->shape[d] > (1 << 30)) return "bad dim";
      numel *= (size_t)t->shape[d];
    }
    pos += 8 * t->ndim;
    t->nbytes = numel * pk_dtype_size(t->dtype);
    if (size - pos < t->nbytes) return "truncated data";
    t->data = io->bytes + out;
    memcpy(t->data, b + pos, t->nbytes);
    out += (t->nbytes + 63) / 64 * 64;
    pos += t->nbytes;
  }
  if (pos != size) return "trailing bytes";
  return NULL;
}

static inline void pk_io_free(pk_io* io) {
  free(io->bytes);
  io->bytes = NULL;
}

/* Borrowed pk_tensors over the .io inputs; returns 0 on failure (tensors created so far are
 * destroyed). */
static inline int pk_io_make_inputs(const pk_io* io, pk_tensor** inputs) {
  for (size_t i = 0; i < io->n_inputs; ++i) {
    const pk_io_tensor* t = &io->t[i];
    inputs[i] = NULL;
    if (pk_tensor_create_borrowed(t->dtype, t->shape, t->ndim, t->data, t->nbytes, &inputs[i]) !=
        PK_STATUS_OK) {
      for (size_t j = 0; j < i; ++j) pk_tensor_destroy(inputs[j]);
      return 0;
    }
  }
  return 1;
}

/* ------------------------------------------------------------------ comparison ---------- */

static inline float pk_half_to_float(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = ldexpf((float)man, -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = ldexpf((float)(man | 0x400), exp - 25);
  return sign ? -v : v;
}

static inline float pk_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float v;
  memcpy(&v, &bits, 4);
  return v;
}

/* Element i of `data` as double, for floating dtypes. */
static inline double pk_float_at(const void* data, pk_dtype dtype, size_t i) {
  switch (dtype) {
    case PK_DTYPE_FLOAT32: return ((const float*)data)[i];
    case PK_DTYPE_FLOAT64: return ((const double*)data)[i];
    case PK_DTYPE_FLOAT16: return pk_half_to_float(((const uint16_t*)data)[i]);
    case PK_DTYPE_BFLOAT16: return pk_bf16_to_float(((const uint16_t*)data)[i]);
    default: return 0.0;
  }
}

/* Compares an output with its expected value: float32/float64 within 1e-4 + 1e-4 * |b|,
 * float16/bfloat16 within 1e-2 + 1e-2 * |b|, everything else bit-exact. Describes the first
 * difference in `why` and returns 0 on mismatch. */
static inline int pk_compare_tensor(pk_tensor* got, const pk_io_tensor* want, char* why, size_t cap) {
  if (pk_tensor_dtype(got) != want->dtype) {
    snprintf(why, cap, "dtype %s, expected %s", pk_dtype_name(pk_tensor_dtype(got)),
             pk_dtype_name(want->dtype));
    return 0;
  }
  if (pk_tensor_ndim(got) != want->ndim) {
    snprintf(why, cap, "%zu dims, expected %zu", pk_tensor_ndim(got), want->ndim);
    return 0;
  }
  const int64_t* shape = pk_tensor_shape(got);
  for (size_t d = 0; d < want->ndim; ++d)
    if (shape[d] != want->shape[d]) {
      snprintf(why, cap, "dim %zu is %lld, expected %lld", d, (long long)shape[d],
               (long long)want->shape[d]);
      return 0;
    }
  if (pk_tensor_nbytes(got) != want->nbytes) {
    snprintf(why, cap, "%zu bytes, expected %zu", pk_tensor_nbytes(got), want->nbytes);
    return 0;
  }
  const void* data = pk_tensor_data(got);
  size_t n = pk_tensor_numel(got);
  int is_float = want->dtype == PK_DTYPE_FLOAT32 || want->dtype == PK_DTYPE_FLOAT64 ||
                 want->dtype == PK_DTYPE_FLOAT16 || want->dtype == PK_DTYPE_BFLOAT16;
  if (!is_float) {
    size_t es = pk_dtype_size(want->dtype);
    for (size_t i = 0; i < n; ++i)
      if (memcmp((const uint8_t*)data + i * es, (const uint8_t*)want->data + i * es, es) != 0) {
        snprintf(why, cap, "element %zu differs (%s, exact match required)", i,
                 pk_dtype_name(want->dtype));
        return 0;
      }
    return 1;
  }
  double tol = (want->dtype == PK_DTYPE_FLOAT32 || want->dtype == PK_DTYPE_FLOAT64) ? 1e-4 : 1e-2;
  for (size_t i = 0; i < n; ++i) {
    double a = pk_float_at(data, want->dtype, i), b = pk_float_at(want->data, want->dtype, i);
    if (isnan(a) && isnan(b)) continue;
    if (isinf(b) && a == b) continue;
    if (!(fabs(a - b) <= tol + tol * fabs(b))) {
      snprintf(why, cap, "element %zu is %.9g, expected %.9g (tolerance %g + %g*|expected|)", i, a,
               b, tol, tol);
      return 0;
    }
  }
  return 1;
}

#endif /* POCKET_TESTS_PK_TEST_H_ */
