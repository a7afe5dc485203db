/* Memory bandwidth for the decode bound of benchmarks/run.py (compiled by common.py at run time).
 *
 *   membw THREADS MIB  ->  {"threads": T, "read_gbs": R, "copy_gbs": C}
 *
 * read: T threads stream through MIB MiB once each pass, summing 64-bit words (a read-only
 *       stream, what a decode step does with its weights), each thread as 4 interleaved
 *       streams; bytes read per second.
 * copy: T threads copy MIB MiB to a second buffer; bytes read + bytes written per second.
 * Best of 7 passes each, after one pass that faults the pages in.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now(void) { return omp_get_wtime(); }

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: membw THREADS MIB\n");
    return 2;
  }
  int threads = atoi(argv[1]);
  size_t bytes = (size_t)atol(argv[2]) << 20;
  size_t n = bytes / sizeof(uint64_t);
  uint64_t* a = aligned_alloc(64, bytes);
  uint64_t* b = aligned_alloc(64, bytes);
  if (!a || !b || threads < 1) return 1;
  omp_set_num_threads(threads);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) a[i] = i, b[i] = 0;  /* each thread touches its own part */

  double best_read = 0, best_copy = 0;
  uint64_t sink = 0;
  for (int pass = 0; pass < 8; pass++) {
    double t0 = now();
    uint64_t s = 0;
    /* Each thread reads its part as 4 interleaved sequential streams: one stream leaves a core's
     * prefetchers idle part of the time, so one thread read less than a decode kernel does. */
#pragma omp parallel reduction(+ : s)
    {
      size_t parts = (size_t)omp_get_num_threads(), id = (size_t)omp_get_thread_num();
      size_t lo = n * id / parts, quarter = (n * (id + 1) / parts - lo) / 4;
      const uint64_t *p0 = a + lo, *p1 = p0 + quarter, *p2 = p1 + quarter, *p3 = p2 + quarter;
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (size_t i = 0; i < quarter; i++) s0 += p0[i], s1 += p1[i], s2 += p2[i], s3 += p3[i];
      s += s0 + s1 + s2 + s3;
    }
    double t1 = now();
    sink += s;
#pragma omp parallel
    {
      size_t parts = (size_t)omp_get_num_threads(), id = (size_t)omp_get_thread_num();
      size_t lo = n * id / parts, hi = n * (id + 1) / parts;
      memcpy(b + lo, a + lo, (hi - lo) * sizeof(uint64_t));
    }
    double t2 = now();
    if (pass == 0) continue;
    if (bytes / (t1 - t0) > best_read) best_read = bytes / (t1 - t0);
    if (2.0 * bytes / (t2 - t1) > best_copy) best_copy = 2.0 * bytes / (t2 - t1);
  }
  printf("{\"threads\": %d, \"read_gbs\": %.2f, \"copy_gbs\": %.2f, \"checksum\": %llu}\n", threads,
         best_read / 1e9, best_copy / 1e9, (unsigned long long)(sink + b[n / 2]));
  free(a);
  free(b);
  return 0;
}
