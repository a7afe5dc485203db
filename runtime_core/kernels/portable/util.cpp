#include "util.h"

namespace pocket {
namespace detail {

Error broadcast_shapes(KernelContext& ctx, const char* op, const Tensor* const* ts, int n,
                       int64_t* out_sizes, int* out_dim) {
  int dim = 0;
  for (int k = 0; k < n; ++k) dim = ts[k]->dim > dim ? ts[k]->dim : dim;
  for (int d = 0; d < dim; ++d) {
    int64_t s = 1;
    for (int k = 0; k < n; ++k) {
      int kd = d - (dim - ts[k]->dim);
      if (kd < 0) continue;
      int64_t ks = ts[k]->sizes[kd];
      if (ks == s || ks == 1) continue;
      if (s != 1) {
        char a[128], b[128];
        return ctx.fail(Error::InvalidArgument, "%s: shapes %s and %s cannot be broadcast", op,
                        shape_string(ts[0]->sizes, ts[0]->dim, a, sizeof a),
                        shape_string(ts[k]->sizes, ts[k]->dim, b, sizeof b));
      }
      s = ks;
    }
    out_sizes[d] = s;
  }
  *out_dim = dim;
  return Error::Ok;
}

void broadcast_strides(const Tensor& t, const int64_t* sizes, int dim, int64_t* strides) {
  for (int d = 0; d < dim; ++d) {
    int td = d - (dim - t.dim);
    strides[d] = (td < 0 || t.sizes[td] == 1) ? 0 : t.strides[td];
  }
  (void)sizes;
}

}  // namespace detail
}  // namespace pocket
