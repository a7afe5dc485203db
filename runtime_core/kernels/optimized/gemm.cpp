// Drivers of the fp32 matrix products: aten::linear, mm, bmm, addmm (and the 1x1
// and im2col convolutions of conv.cpp) over an ISA's GemmKernels. They cut the output into blocks
// for the thread pool and for the caches; the microkernels do the register tiling.
#include "../portable/parallel_util.h"
#include "ukernels.h"

namespace pocket {
namespace detail {

namespace {

// Bytes of B (rows of the weight for linear) a thread works through before moving on to
// the next rows of A: about a quarter of a typical L2, so the block stays cached while
// every row of A passes over it.
constexpr int64_t kBlockBytes = 256 * 1024;

}  // namespace

void gemm_nt(KernelContext& ctx, const GemmKernels& g, int64_t m, int64_t n, int64_t k, const float* a,
             int64_t lda, const float* b, int64_t ldb, const float* bias, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t nr = g.nt_nr, mr = g.nt_mr;
  int64_t nc = kBlockBytes / (4 * (k > 0 ? k : 1));
  nc = nc < nr ? nr : nc / nr * nr;
  const int64_t col_tiles = (n + nr - 1) / nr, row_tiles = (m + mr - 1) / mr;
  // Split the columns (weight rows) when there are enough of them for every thread, else
  // the rows: either way each task reads its share of B from memory once.
  const int64_t threads = ctx.num_threads();
  if (col_tiles >= 2 * threads || row_tiles < col_tiles) {
    ctx.parallel_for(col_tiles, grain_for(nr * m * k), [&](int64_t t0, int64_t t1) {
      const int64_t j1 = t1 * nr < n ? t1 * nr : n;
      for (int64_t j = t0 * nr; j < j1; j += nc) {
        const int64_t cols = j1 - j < nc ? j1 - j : nc;
        g.nt(m, cols, k, a, lda, b + j * ldb, ldb, bias != nullptr ? bias + j : nullptr, c + j, ldc);
      }
    });
  } else {
    ctx.parallel_for(row_tiles, grain_for(mr * n * k), [&](int64_t t0, int64_t t1) {
      const int64_t i1 = t1 * mr < m ? t1 * mr : m;
      for (int64_t j = 0; j < n; j += nc) {
        const int64_t cols = n - j < nc ? n - j : nc;
        g.nt(i1 - t0 * mr, cols, k, a + t0 * mr * lda, lda, b + j * ldb, ldb, bias != nullptr ? bias + j : nullptr,
             c + t0 * mr * ldc + j, ldc);
      }
    });
  }
}

void gemm_nn(KernelContext& ctx, const GemmKernels& g, int64_t m, int64_t n, int64_t k, const float* a,
             int64_t a_rs, int64_t a_cs, const float* b, int64_t ldb, const float* bias, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t nr = g.nn_nr, mr = g.nn_mr;
  const int64_t col_tiles = (n + nr - 1) / nr, row_tiles = (m + mr - 1) / mr;
  if (col_tiles >= row_tiles) {
    ctx.parallel_for(col_tiles, grain_for(nr * m * k), [&](int64_t t0, int64_t t1) {
      const int64_t j1 = t1 * nr < n ? t1 * nr : n;
      g.nn(m, j1 - t0 * nr, k, a, a_rs, a_cs, b + t0 * nr, ldb, bias, c + t0 * nr, ldc);
    });
  } else {
    ctx.parallel_for(row_tiles, grain_for(mr * n * k), [&](int64_t t0, int64_t t1) {
      const int64_t i0 = t0 * mr, i1 = t1 * mr < m ? t1 * mr : m;
      g.nn(i1 - i0, n, k, a + i0 * a_rs, a_rs, a_cs, b, ldb, bias != nullptr ? bias + i0 : nullptr, c + i0 * ldc,
           ldc);
    });
  }
}

Error linear_with(KernelContext& ctx, Value** args, const GemmKernels& g) {
  LinearArgs a;
  Error e = prepare_linear(ctx, args, &a);
  if (e != Error::Ok) return e;
  if (a.dtype != ScalarType::Float32) {
    linear_portable(ctx, a);
    return Error::Ok;
  }
  gemm_nt(ctx, g, a.m, a.n, a.k, static_cast<const float*>(a.x), a.k, static_cast<const float*>(a.w), a.k,
          static_cast<const float*>(a.b), static_cast<float*>(a.y), a.n);
  return Error::Ok;
}

namespace {

// Batch item i of p: "nn" when b's rows are contiguous, "nt" when its columns and a's rows
// are; false when neither (the caller falls back to the portable product).
bool matmul_item(KernelContext& ctx, const Matmul& p, const GemmKernels& g, int64_t i) {
  const float* a = p.a + i * p.a_bs;
  const float* b = p.b + i * p.b_bs;
  float* c = p.c + i * p.m * p.n;
  if (p.b_cs == 1 || p.n == 1) {
    gemm_nn(ctx, g, p.m, p.n, p.k, a, p.a_rs, p.a_cs, b, p.b_rs, nullptr, c, p.n);
  } else if ((p.b_rs == 1 || p.k == 1) && (p.a_cs == 1 || p.k == 1)) {
    gemm_nt(ctx, g, p.m, p.n, p.k, a, p.a_rs, b, p.b_cs, nullptr, c, p.n);
  } else {
    return false;
  }
  return true;
}

}  // namespace

void matmul_with(KernelContext& ctx, const Matmul& p, const GemmKernels& g) {
  const bool nn = p.b_cs == 1 || p.n == 1;
  const bool nt = (p.b_rs == 1 || p.k == 1) && (p.a_cs == 1 || p.k == 1);
  if (!nn && !nt) {
    matmul_portable(ctx, p);
    return;
  }
  // Many small products (attention's bmm): one batch item per task, each single-threaded.
  const int64_t work = p.m * p.n * p.k;
  if (p.batch > 1 && ctx.num_threads() > 1 && work * 4 < kMinParallelWork * ctx.num_threads()) {
    ctx.parallel_for(p.batch, grain_for(work), [&](int64_t i0, int64_t i1) {
      KernelContext serial = ctx;
      serial.threads = nullptr;
      for (int64_t i = i0; i < i1; ++i) matmul_item(serial, p, g, i);
    });
    return;
  }
  for (int64_t i = 0; i < p.batch; ++i) matmul_item(ctx, p, g, i);
}

}  // namespace detail
}  // namespace pocket
