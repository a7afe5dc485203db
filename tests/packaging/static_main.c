/* Links libpocket.a plainly (no --whole-archive / -all_load) and runs a program's forward on an
 * input of ones: proves that nothing in the runtime depends on static registration.
 *   static_main MODEL NUMEL_IN SHAPE... -> prints the first output's floats, one per line */
#include <stdio.h>
#include <stdlib.h>

#include "pocket/pocket.h"

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int64_t shape[8];
  size_t ndim = (size_t)(argc - 2), numel = 1;
  for (size_t i = 0; i < ndim && i < 8; ++i) numel *= (size_t)(shape[i] = atoll(argv[i + 2]));
  float* x = malloc(numel * sizeof *x);
  for (size_t i = 0; i < numel; ++i) x[i] = 1.0f;
  pk_module* m = NULL;
  pk_tensor *in = NULL, *out = NULL;
  if (pk_module_load_file(argv[1], PK_LOAD_MMAP, &m) != PK_STATUS_OK ||
      pk_tensor_create_borrowed(PK_DTYPE_FLOAT32, shape, ndim, x, numel * sizeof *x, &in) != PK_STATUS_OK ||
      pk_module_execute(m, "forward", &in, 1, &out, 1) != PK_STATUS_OK) {
    fprintf(stderr, "%s\n", pk_last_error());
    return 1;
  }
  const float* y = pk_tensor_data(out);
  for (size_t i = 0; i < pk_tensor_numel(out); ++i) printf("%.9g\n", y[i]);
  pk_tensor_destroy(out);
  pk_tensor_destroy(in);
  pk_module_destroy(m);
  free(x);
  return 0;
}
