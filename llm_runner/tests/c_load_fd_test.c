/* Loading a program from a region of an open file (pk_module_load_fd, pk_runner_create_fd):
 * golden programs stored uncompressed inside a real zip, once at a 64-byte aligned offset
 * (mapped in place) and once at an offset that is only 4-byte aligned, as Android's packager
 * leaves assets (read instead), run exactly like the files themselves; a wrong offset or
 * length is an error that names it. Usage: c_load_fd_test GOLDEN_DIR TMP_DIR */
#include "pk_test.h" /* first: it sets _POSIX_C_SOURCE */

#include <fcntl.h>
#include <unistd.h>

#include "pocket/pocket_llm.h"

/* ------------------------------------------------------------------ a stored zip -------- */

static uint32_t crc32_of(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

static void put16(FILE* f, uint32_t v) {
  fputc((int)(v & 0xFF), f);
  fputc((int)(v >> 8 & 0xFF), f);
}

static void put32(FILE* f, uint32_t v) {
  put16(f, v & 0xFFFF);
  put16(f, v >> 16);
}

typedef struct {
  const char* name;
  const uint8_t* data;
  size_t size;
  uint32_t crc;
  long header_offset;
} zip_entry;

/* Local header, padded through an extra field (the one Android's zipalign writes, 0xD935) so
 * that the data starts at a multiple of `align` plus `skew`; returns the data's offset. */
static long zip_put_entry(FILE* f, zip_entry* e, long align, long skew) {
  e->header_offset = ftell(f);
  e->crc = crc32_of(e->data, e->size);
  long name_len = (long)strlen(e->name);
  long bare = e->header_offset + 30 + name_len + 6; /* 6: the extra field's own header */
  long pad = ((skew - bare) % align + align) % align;
  put32(f, 0x04034b50u);
  put16(f, 20), put16(f, 0), put16(f, 0); /* version, flags, method 0 = stored */
  put16(f, 0), put16(f, 0x21);           /* time, date (1980-01-01) */
  put32(f, e->crc), put32(f, (uint32_t)e->size), put32(f, (uint32_t)e->size);
  put16(f, (uint32_t)name_len), put16(f, (uint32_t)(6 + pad));
  fwrite(e->name, 1, (size_t)name_len, f);
  put16(f, 0xD935), put16(f, (uint32_t)(2 + pad)), put16(f, (uint32_t)align);
  for (long i = 0; i < pad; ++i) fputc(0, f);
  long data_offset = ftell(f);
  fwrite(e->data, 1, e->size, f);
  return data_offset;
}

static void zip_put_directory(FILE* f, const zip_entry* entries, int n) {
  long start = ftell(f);
  for (int i = 0; i < n; ++i) {
    const zip_entry* e = &entries[i];
    put32(f, 0x02014b50u);
    put16(f, 20), put16(f, 20), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0x21);
    put32(f, e->crc), put32(f, (uint32_t)e->size), put32(f, (uint32_t)e->size);
    put16(f, (uint32_t)strlen(e->name)), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0);
    put32(f, 0), put32(f, (uint32_t)e->header_offset);
    fwrite(e->name, 1, strlen(e->name), f);
  }
  long size = ftell(f) - start;
  put32(f, 0x06054b50u);
  put16(f, 0), put16(f, 0), put16(f, (uint32_t)n), put16(f, (uint32_t)n);
  put32(f, (uint32_t)size), put32(f, (uint32_t)start), put16(f, 0);
}

/* Writes a zip of a 5000-byte text entry (so the program starts past the first page) and
 * `program` stored at offset ≡ skew (mod align); *offset receives where its bytes start. */
static int write_zip(const char* path, const uint8_t* program, size_t size, long align, long skew, long* offset) {
  static uint8_t text[5000];
  memset(text, 'x', sizeof text);
  zip_entry e[2] = {{"readme.txt", text, sizeof text, 0, 0}, {"assets/model.pocket", program, size, 0, 0}};
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  zip_put_entry(f, &e[0], 1, 0);
  *offset = zip_put_entry(f, &e[1], align, skew);
  zip_put_directory(f, e, 2);
  return fclose(f) == 0;
}

/* ------------------------------------------------------------------ module -------------- */

/* Runs `forward` on the golden inputs; 1 when every output matches the golden data. */
static int runs_like_golden(pk_module* m, const pk_io* io, const char* what) {
  pk_tensor* inputs[PK_IO_MAX_TENSORS];
  pk_tensor* outputs[PK_IO_MAX_TENSORS] = {0};
  if (!CHECK(pk_io_make_inputs(io, inputs), "%s: inputs", what)) return 0;
  int ok = CHECK(pk_module_execute(m, "forward", inputs, io->n_inputs, outputs, io->n_outputs) == PK_STATUS_OK,
                 "%s: execute: %s", what, pk_last_error());
  for (size_t i = 0; ok && i < io->n_outputs; ++i) {
    char why[256];
    ok = CHECK(pk_compare_tensor(outputs[i], &io->t[io->n_inputs + i], why, sizeof why), "%s: output %zu: %s",
               what, i, why);
  }
  for (size_t i = 0; i < io->n_inputs; ++i) pk_tensor_destroy(inputs[i]);
  for (size_t i = 0; i < io->n_outputs; ++i) pk_tensor_destroy(outputs[i]);
  return ok;
}

static void test_module(const char* golden, const char* tmp) {
  char* path = pk_join(golden, "mlp.pocket");
  char* io_path = pk_join(golden, "mlp.forward.io");
  char* zip_path = pk_join(tmp, "c_load_fd_test.zip");
  size_t size = 0, io_size = 0;
  uint8_t* program = pk_read_file(path, &size);
  uint8_t* io_bytes = pk_read_file(io_path, &io_size);
  pk_io io;
  if (!CHECK(program && io_bytes && pk_io_parse(io_bytes, io_size, &io) == NULL, "read %s and %s", path, io_path))
    return;

  const long skews[2] = {0, 4}; /* 64-byte aligned; only 4-byte aligned */
  for (int k = 0; k < 2; ++k) {
    long offset = 0;
    if (!CHECK(write_zip(zip_path, program, size, 64, skews[k], &offset), "write %s", zip_path)) break;
    int fd = open(zip_path, O_RDONLY | O_CLOEXEC);
    pk_module* m = NULL;
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, size, PK_LOAD_MMAP, &m), PK_STATUS_OK, NULL);
    close(fd); /* the module keeps no reference to the descriptor */
    if (m == NULL) continue;
    CHECK(pk_module_is_mapped(m) == (skews[k] == 0), "offset %ld: mapped %d", offset, pk_module_is_mapped(m));
    runs_like_golden(m, &io, skews[k] == 0 ? "mapped from the zip" : "read from the zip");
    pk_module_destroy(m);

    fd = open(zip_path, O_RDONLY | O_CLOEXEC);
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, size, PK_LOAD_READ, &m), PK_STATUS_OK, NULL);
    if (m) CHECK(!pk_module_is_mapped(m), "PK_LOAD_READ mapped the program");
    if (m) runs_like_golden(m, &io, "PK_LOAD_READ from the zip");
    pk_module_destroy(m);

    /* Wrong offsets and lengths: each an error naming it; *out untouched. */
    pk_module* bad = NULL;
    uint64_t zip_size = (uint64_t)lseek(fd, 0, SEEK_END);
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset - 16, size, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_PROGRAM,
                 "wrong magic");
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset + 1, size, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_PROGRAM,
                 "offset");
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, size - 100, PK_LOAD_MMAP, &bad),
                 PK_STATUS_INVALID_PROGRAM, "length");
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, 16, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_PROGRAM,
                 "truncated");
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, 0, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_PROGRAM,
                 "truncated");
    CHECK_STATUS(pk_module_load_fd(fd, (uint64_t)offset, zip_size, PK_LOAD_MMAP, &bad), PK_STATUS_OUT_OF_RANGE,
                 "beyond the end of the file");
    CHECK_STATUS(pk_module_load_fd(fd, zip_size + 64, 64, PK_LOAD_MMAP, &bad), PK_STATUS_OUT_OF_RANGE,
                 "beyond the end of the file");
    CHECK_STATUS(pk_module_load_fd(fd, UINT64_MAX - 8, 64, PK_LOAD_MMAP, &bad), PK_STATUS_OUT_OF_RANGE, "beyond");
    CHECK(bad == NULL, "a failed load wrote *out");
    close(fd);
    CHECK_STATUS(pk_module_load_fd(fd, 0, size, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_ARGUMENT,
                 "not an open file descriptor");
    CHECK_STATUS(pk_module_load_fd(-1, 0, size, PK_LOAD_MMAP, &bad), PK_STATUS_INVALID_ARGUMENT, "fd -1");
  }
  CHECK_STATUS(pk_module_load_fd(0, 0, 1, PK_LOAD_MMAP, NULL), PK_STATUS_INVALID_ARGUMENT, "out");
  CHECK(pk_module_is_mapped(NULL) == 0, "is_mapped(NULL)");

  /* The file itself, through its fd at offset 0, is mapped. */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  pk_module* whole = NULL;
  CHECK_STATUS(pk_module_load_fd(fd, 0, size, PK_LOAD_MMAP, &whole), PK_STATUS_OK, NULL);
  close(fd);
  if (whole) CHECK(pk_module_is_mapped(whole), "a whole file at offset 0 is not mapped");
  if (whole) runs_like_golden(whole, &io, "whole file through its fd");
  pk_module_destroy(whole);

  unlink(zip_path);
  pk_io_free(&io);
  free(program), free(io_bytes), free(path), free(io_path), free(zip_path);
}

/* ------------------------------------------------------------------ runner -------------- */

/* Greedy ids for a fixed prompt: the runner from the zip must give the file's. */
static size_t greedy(pk_runner* r, int32_t* out, size_t cap) {
  const int32_t prompt[] = {1, 17, 42, 7, 99, 3};
  pk_generation_config* c = NULL;
  pk_generation_config_create(&c);
  pk_generation_config_set_max_new_tokens(c, 12);
  size_t n = 0;
  CHECK_STATUS(pk_runner_generate_ids(r, prompt, 6, c, out, cap, &n), PK_STATUS_OK, NULL);
  pk_generation_config_destroy(c);
  return n;
}

static void test_runner(const char* golden, const char* tmp) {
  char* path = pk_join(golden, "tiny_llm.pocket");
  char* tokenizer = pk_join(golden, "tiny_llm.tokenizer.json");
  char* zip_path = pk_join(tmp, "c_load_fd_test_llm.zip");
  size_t size = 0;
  uint8_t* program = pk_read_file(path, &size);
  long offset = 0;
  if (!CHECK(program && write_zip(zip_path, program, size, 64, 0, &offset), "zip %s", path)) return;

  pk_runner *from_file = NULL, *from_zip = NULL, *bad = NULL;
  CHECK_STATUS(pk_runner_create(path, tokenizer, &from_file), PK_STATUS_OK, NULL);
  int fd = open(zip_path, O_RDONLY | O_CLOEXEC);
  CHECK_STATUS(pk_runner_create_fd(fd, (uint64_t)offset, size, tokenizer, &from_zip), PK_STATUS_OK, NULL);
  if (from_file && from_zip) {
    int32_t a[32], b[32];
    size_t na = greedy(from_file, a, 32), nb = greedy(from_zip, b, 32);
    CHECK(na == 12 && na == nb && memcmp(a, b, na * sizeof a[0]) == 0, "runner from the zip generates other ids");
  }
  CHECK_STATUS(pk_runner_create_fd(fd, (uint64_t)offset + 4, size, tokenizer, &bad), PK_STATUS_INVALID_PROGRAM,
               "offset");
  CHECK_STATUS(pk_runner_create_fd(fd, (uint64_t)offset, size + 1000000, tokenizer, &bad), PK_STATUS_OUT_OF_RANGE,
               "beyond the end of the file");
  /* The golden tiny LLM carries no tokenizer of its own. */
  CHECK_STATUS(pk_runner_create_fd(fd, (uint64_t)offset, size, NULL, &bad), PK_STATUS_NOT_FOUND,
               "no embedded tokenizer");
  CHECK_STATUS(pk_runner_create_fd(fd, (uint64_t)offset, size, tokenizer, NULL), PK_STATUS_INVALID_ARGUMENT, "out");
  CHECK(bad == NULL, "a failed create wrote *out");
  close(fd);
  pk_runner_destroy(from_file);
  pk_runner_destroy(from_zip);
  unlink(zip_path);
  free(program), free(path), free(tokenizer), free(zip_path);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: c_load_fd_test GOLDEN_DIR TMP_DIR\n");
    return 2;
  }
  test_module(argv[1], argv[2]);
  test_runner(argv[1], argv[2]);
  return pk_test_finish();
}
