/* Pocket C API, version 1: the one boundary under every language binding.
 *
 * Conventions (they hold for every function below):
 *  - Objects are opaque handles, created by pk_<object>_create/_load and released by
 *    pk_<object>_destroy, which accepts NULL.
 *  - Functions that can fail return pk_status. On failure out-parameters are left untouched
 *    and pk_last_error() returns a message naming the problem (the file, method, input,
 *    op, expected vs actual). No C++ exception or abort crosses this boundary.
 *  - Strings are UTF-8 and NUL-terminated. Sizes are size_t, shapes int64_t.
 *  - Ownership is written at every pointer parameter: "borrowed" means the caller keeps
 *    ownership and must keep the memory alive for the stated time.
 *  - Threads: see "Thread safety" below.
 *
 * Example (error handling shortened):
 *
 *   pk_module* m = NULL;
 *   if (pk_module_load_file("model.pocket", PK_LOAD_MMAP, &m) != PK_STATUS_OK) {
 *     fprintf(stderr, "%s\n", pk_last_error());
 *     return 1;
 *   }
 *   float x[8] = {0};
 *   int64_t shape[2] = {1, 8};
 *   pk_tensor* in = NULL;
 *   pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, shape, 2, x, sizeof x, &in);
 *   pk_tensor* out = NULL;
 *   pk_module_execute(m, "forward", &in, 1, &out, 1);
 *   const float* y = (const float*)pk_tensor_data(out);
 *   pk_tensor_destroy(out);
 *   pk_tensor_destroy(in);
 *   pk_module_destroy(m);
 */
/* Thread safety (every binding keeps this contract; they all reach the runtime through it):
 *  - pk_module: any thread may call any function on a module at any time. Calls that run or
 *    describe methods (execute, input/output count and info, set_num_threads,
 *    set_memory_limit) take the module's lock: on one module they run one at a time, in
 *    turn (its planned memory is shared), and a second caller waits. Separate modules run in
 *    parallel, each on its own threads. Method names, metadata and the limit getters need no
 *    lock (they never change).
 *  - pk_module_set_num_threads while another thread is inside pk_module_execute on the same
 *    module waits for that execute to return and applies to the calls after it.
 *  - pk_tensor: a tensor may be read from several threads; writing one while another thread
 *    uses it (including as an execute input) is the caller's race.
 *  - Destroying a handle while another thread is inside a call on it is a use after free; the
 *    language bindings make close() wait for (Java, Python) or outlive (Swift) running calls.
 *  - pk_last_error() is per thread. The LLM runner's contract is in pocket_llm.h.
 */
#ifndef POCKET_POCKET_H_
#define POCKET_POCKET_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PK_API __declspec(dllexport)
#else
#define PK_API __attribute__((visibility("default")))
#endif

#define PK_API_VERSION 1

/* The largest rank a tensor may have: shape arrays of PK_MAX_DIMS elements always suffice. */
#define PK_MAX_DIMS 8

/* Status codes; the numbers are stable. */
typedef enum pk_status {
  PK_STATUS_OK = 0,
  PK_STATUS_INVALID_ARGUMENT = 1, /* wrong shape, dtype, count, name, NULL where not allowed */
  PK_STATUS_INVALID_PROGRAM = 2,  /* malformed or inconsistent .pocket file */
  PK_STATUS_UNSUPPORTED = 3,      /* well-formed, but not supported here (version, op) */
  PK_STATUS_NOT_FOUND = 4,        /* no such file, method, input or metadata key */
  PK_STATUS_OUT_OF_MEMORY = 5,
  PK_STATUS_IO = 6,               /* reading a file failed */
  PK_STATUS_OUT_OF_RANGE = 7,     /* index, shape or length outside its bounds */
  PK_STATUS_INTERNAL = 8,
  PK_STATUS_CANCELLED = 9,        /* stopped by the caller */
  PK_STATUS_BUSY = 10,            /* the object is in use by another call (see Thread safety) */
} pk_status;

/* Element types; the numbers are stable and match the file format. */
typedef enum pk_dtype {
  PK_DTYPE_FLOAT32 = 0,
  PK_DTYPE_FLOAT16 = 1,
  PK_DTYPE_BFLOAT16 = 2,
  PK_DTYPE_FLOAT64 = 3,
  PK_DTYPE_INT8 = 4,
  PK_DTYPE_UINT8 = 5,
  PK_DTYPE_INT16 = 6,
  PK_DTYPE_INT32 = 7,
  PK_DTYPE_INT64 = 8,
  PK_DTYPE_BOOL = 9,
} pk_dtype;

typedef enum pk_load_mode {
  PK_LOAD_MMAP = 0, /* map the file; constants are used in place (default, least memory) */
  PK_LOAD_READ = 1, /* read the whole file into memory */
} pk_load_mode;

/* A short name for a status, e.g. "INVALID_PROGRAM". Static storage; never NULL. */
PK_API const char* pk_status_string(pk_status status);

/* Message of the last failure on the calling thread; "" when none. The string is owned by
 * the library and valid until the next pk_ call on the same thread. */
PK_API const char* pk_last_error(void);

/* Version of this C API (PK_API_VERSION the library was built with). */
PK_API int pk_api_version(void);

/* ---------------------------------------------------------------- tensors ---------------- */

typedef struct pk_tensor pk_tensor;

/* Creates a tensor that owns zero-initialised memory for `shape`.
 * shape: borrowed for the call; ndim <= PK_MAX_DIMS. *out: owned by the caller (pk_tensor_destroy). */
PK_API pk_status pk_tensor_create(pk_dtype dtype, const int64_t* shape, size_t ndim,
                                  pk_tensor** out);

/* Creates a tensor over caller memory without copying. data: borrowed, must hold
 * nbytes >= numel * element size and stay alive until the tensor is destroyed.
 * shape: borrowed for the call. *out: owned by the caller. */
PK_API pk_status pk_tensor_create_borrowed(pk_dtype dtype, const int64_t* shape, size_t ndim,
                                           void* data, size_t nbytes, pk_tensor** out);

/* Releases a tensor (never the memory a borrowed tensor points to). NULL is allowed. */
PK_API void pk_tensor_destroy(pk_tensor* tensor);

PK_API pk_dtype pk_tensor_dtype(const pk_tensor* tensor);
PK_API size_t pk_tensor_ndim(const pk_tensor* tensor);
/* Pointer to ndim sizes; owned by the tensor. */
PK_API const int64_t* pk_tensor_shape(const pk_tensor* tensor);
PK_API size_t pk_tensor_numel(const pk_tensor* tensor);
PK_API size_t pk_tensor_nbytes(const pk_tensor* tensor);
/* The tensor's contiguous data; owned by the tensor (or borrowed from the caller). */
PK_API void* pk_tensor_data(pk_tensor* tensor);
/* Bytes per element of `dtype`, 0 for an unknown value. */
PK_API size_t pk_dtype_size(pk_dtype dtype);
/* "float32", "int64", ...; static storage. */
PK_API const char* pk_dtype_name(pk_dtype dtype);

/* ---------------------------------------------------------------- modules ---------------- */

typedef struct pk_module pk_module;

/* Loads and verifies a .pocket file. path: borrowed for the call. *out: owned by the caller
 * (pk_module_destroy). Fails with NOT_FOUND, IO, INVALID_PROGRAM or UNSUPPORTED. */
PK_API pk_status pk_module_load_file(const char* path, pk_load_mode mode, pk_module** out);

/* Loads a .pocket file from memory. The module copies the bytes; data is borrowed for the
 * call only. *out: owned by the caller. */
PK_API pk_status pk_module_load_buffer(const void* data, size_t size, pk_module** out);

/* Releases a module and everything it owns. NULL is allowed. */
PK_API void pk_module_destroy(pk_module* module);

/* Number of threads kernels may use (1 = the calling thread only; 0 = the default). Waits for
 * an execute running on another thread and applies to the calls after it. */
PK_API pk_status pk_module_set_num_threads(pk_module* module, int num_threads);

/* Bytes the module may allocate, in total, for its planned arenas, mutable buffers (e.g. a KV
 * cache) and kernel scratch space. Memory is allocated when a method is first used, so a limit
 * set right after loading applies to all of it. The default is the machine's physical memory:
 * a file that declares more (crafted, or meant for a bigger machine) fails with OUT_OF_MEMORY
 * and a message naming the limit, before anything is allocated, instead of the process being
 * killed. Raise it for a trusted file, lower it to keep a model within a memory budget.
 * UINT64_MAX means no limit. Memory already held is kept when the limit is lowered under it. */
PK_API pk_status pk_module_set_memory_limit(pk_module* module, uint64_t bytes);
/* The current limit (0 for NULL). */
PK_API uint64_t pk_module_memory_limit(const pk_module* module);

PK_API size_t pk_module_method_count(const pk_module* module);
/* Name of method i; owned by the module. NULL when i is out of range. */
PK_API const char* pk_module_method_name(const pk_module* module, size_t i);

PK_API size_t pk_module_metadata_count(const pk_module* module);
/* Key and value of metadata entry i; owned by the module. Fails with OUT_OF_RANGE. */
PK_API pk_status pk_module_metadata_entry(const pk_module* module, size_t i, const char** key,
                                          const char** value);
/* Value stored under `key` (borrowed for the call); *value owned by the module. NOT_FOUND
 * when the key is absent. */
PK_API pk_status pk_module_metadata_get(const pk_module* module, const char* key,
                                        const char** value);

/* Inputs and outputs of a method. method: borrowed for the call. */
PK_API pk_status pk_module_input_count(pk_module* module, const char* method, size_t* out);
PK_API pk_status pk_module_output_count(pk_module* module, const char* method, size_t* out);

/* Dtype and shape bounds of input i. min_shape/max_shape: caller arrays of `capacity`
 * elements (borrowed for the call); *ndim receives the rank. A static dim has min == max. */
PK_API pk_status pk_module_input_info(pk_module* module, const char* method, size_t i,
                                      pk_dtype* dtype, size_t* ndim, int64_t* min_shape,
                                      int64_t* max_shape, size_t capacity);
PK_API pk_status pk_module_output_info(pk_module* module, const char* method, size_t i,
                                       pk_dtype* dtype, size_t* ndim, int64_t* min_shape,
                                       int64_t* max_shape, size_t capacity);

/* Runs `method` (borrowed for the call). inputs: n_inputs tensors, borrowed for the call.
 * outputs: caller array of n_outputs slots (n_outputs must equal the method's output count);
 * each slot receives a new tensor owned by the caller that holds a copy of the output.
 * Wrong input count, dtype, rank or a size outside the exported bounds fails with
 * INVALID_ARGUMENT, naming the input. */
PK_API pk_status pk_module_execute(pk_module* module, const char* method,
                                   pk_tensor* const* inputs, size_t n_inputs,
                                   pk_tensor** outputs, size_t n_outputs);

/* ---------------------------------------------------------------- modules in a file region */

/* Loads the .pocket program stored in `length` bytes of the open file `fd`, starting at byte
 * `offset`: a model inside an APK (Android's AssetFileDescriptor gives fd, offset and length of
 * an asset stored uncompressed, `noCompress += "pocket"` in Gradle), a zip entry stored
 * without deflate, or a file the app holds open.
 *
 * fd: borrowed for the call; the module keeps no reference to it, so the caller may close it
 * once this returns (a mapping outlives its descriptor). The file position is not changed.
 * With PK_LOAD_MMAP the region is mapped in place, from the page boundary below `offset`, when
 * `offset` is a multiple of 16 (the alignment the program's tables need); at another offset
 * (zip tools and Android's packager align stored entries to 4 bytes) or with PK_LOAD_READ the
 * region is read into memory instead. pk_module_is_mapped() tells which happened.
 *
 * Fails with OUT_OF_RANGE when [offset, offset + length) does not lie inside the file,
 * INVALID_PROGRAM when there is no .pocket header at `offset` or `length` is smaller than the
 * program, INVALID_ARGUMENT for a descriptor that is not open; messages name fd, offset and
 * length. *out: owned by the caller (pk_module_destroy). */
PK_API pk_status pk_module_load_fd(int fd, uint64_t offset, uint64_t length, pk_load_mode mode,
                                   pk_module** out);

/* 1 when the module uses its program in place from a file mapping (no copy), 0 when the
 * program was read or copied into memory (or module is NULL). */
PK_API int pk_module_is_mapped(const pk_module* module);

/* ---------------------------------------------------------------- profiling */

/* One instruction of a method, and its share of the runs since profiling was turned on. */
typedef struct pk_profile_entry {
  const char* op;       /* "aten::convolution" ("move": a copy between values); lives as long as the module */
  const char* source;   /* the model's source line it came from, "net.py:12 in forward: y = self.conv(x)";
                           "" when the file does not say; lives as long as the module */
  const char* layer;    /* the model's submodule it came from, "features.3.conv.0 (Conv2d)"; "" when the
                           file does not say (or at the top level); lives as long as the module */
  uint64_t calls;
  uint64_t nanoseconds; /* in all calls */
} pk_profile_entry;

/* enabled != 0: from now on every pk_module_execute() times each instruction it runs (a
 * monotonic clock read around it), counts cleared; 0: stops and drops the counts. Off by
 * default. */
PK_API pk_status pk_module_set_profiling(pk_module* module, int enabled);

/* Copies method's profile, one entry per instruction in the order they run, into `entries`
 * (up to `capacity` of them; entries may be NULL when capacity is 0) and sets *count to the
 * method's number of instructions: call with capacity 0 to size the array. Aggregate the
 * entries by op, layer or source line to find the slow parts (`pocket run --profile` does).
 * INVALID_ARGUMENT while profiling is off. */
PK_API pk_status pk_module_profile(pk_module* module, const char* method, pk_profile_entry* entries,
                                   size_t capacity, size_t* count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POCKET_POCKET_H_ */
