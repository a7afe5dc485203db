#include "scatter_util.h"

#include <cstring>
#include <limits>

#include "shape_util.h"

#include "elementwise_util.h"

namespace pocket {
namespace detail {

Error scatter_prepare(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                      const Tensor& index, const Tensor* src, Tensor& out, int* d) {
  Error e = expect_index_tensor(ctx, op, index);
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, self.dim, d);
  if (e == Error::Ok && src != nullptr) e = expect_same_dtype(ctx, op, *src, out);
  if (e != Error::Ok) return e;
  bool ok = index.dim == self.dim && (src == nullptr || src->dim == self.dim);
  for (int i = 0; ok && i < self.dim; ++i)
    ok = (i == *d || index.sizes[i] <= self.sizes[i]) &&
         (src == nullptr || index.sizes[i] <= src->sizes[i]);
  if (!ok) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument,
                    "%s: index of shape %s does not fit self of shape %s at dim %d", op,
                    shape_string(index.sizes, index.dim, a, sizeof a),
                    shape_string(self.sizes, self.dim, b, sizeof b), *d);
  }
  return copy_to_output(ctx, op, self, out, self.sizes, self.dim);
}

Error parse_scatter_reduce(KernelContext& ctx, const char* op, const Value& name, ScatterReduce* r) {
  if (string_is(name, "sum") || string_is(name, "add")) *r = ScatterReduce::Sum;
  else if (string_is(name, "prod") || string_is(name, "multiply")) *r = ScatterReduce::Prod;
  else if (string_is(name, "mean")) *r = ScatterReduce::Mean;
  else if (string_is(name, "amax")) *r = ScatterReduce::Amax;
  else if (string_is(name, "amin")) *r = ScatterReduce::Amin;
  else
    return ctx.fail(Error::InvalidArgument,
                    "%s: reduce must be sum, prod, mean, amax or amin (add, multiply)", op);
  return Error::Ok;
}

template <typename T>
static T identity(ScatterReduce r) {
  if (r == ScatterReduce::Prod) return T(1);
  if (r == ScatterReduce::Amax)
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  if (r == ScatterReduce::Amin)
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  return T(0);
}

template <typename T>
static T combine(ScatterReduce r, T a, T b) {
  switch (r) {
    case ScatterReduce::Prod: return static_cast<T>(a * b);
    case ScatterReduce::Amax: return max_nan(a, b);
    case ScatterReduce::Amin: return min_nan(a, b);
    default: return static_cast<T>(a + b);
  }
}

Error scatter_reduce(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                     const Tensor& index, const Tensor& src, ScatterReduce r, bool include_self,
                     Tensor& out) {
  int d = 0;
  Error e = scatter_prepare(ctx, op, self, dim, index, &src, out, &d);
  if (e != Error::Ok) return e;
  // Elements folded into each output (only when needed: mean, or positions to reset).
  int32_t* count = nullptr;
  size_t n = static_cast<size_t>(out.numel());
  if (r == ScatterReduce::Mean || !include_self) {
    count = static_cast<int32_t*>(ctx.allocate_temp(n * sizeof(int32_t) + 1));
    if (count == nullptr)
      return ctx.fail(Error::OutOfMemory, "%s: no temp memory for %zu counts", op, n);
    std::memset(count, 0, n * sizeof(int32_t));
    e = scatter_walk(ctx, op, d, index, &src, out, [&](int64_t o, int64_t) { ++count[o]; });
    if (e != Error::Ok) return e;
  }
  Error dispatched = dispatch_kinds<Kinds::All>(ctx, op, out.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data_as<T>();
    const T* x = src.data_as<const T>();
    if (!include_self)
      for (size_t i = 0; i < n; ++i)
        if (count[i] > 0) y[i] = identity<T>(r);
    e = scatter_walk(ctx, op, d, index, &src, out, [&](int64_t o, int64_t s) { y[o] = combine(r, y[o], x[s]); });
    if (e != Error::Ok || r != ScatterReduce::Mean || std::is_same<T, bool>::value) return;  // bool: or/and only
    for (size_t i = 0; i < n; ++i) {
      T c = static_cast<T>(count[i] + (include_self ? 1 : 0));
      if (count[i] == 0) continue;
      if constexpr (std::is_floating_point<T>::value) y[i] = y[i] / c;
      else if constexpr (!std::is_same<T, bool>::value) y[i] = div_floor_int(y[i], c);
    }
  });
  return dispatched != Error::Ok ? dispatched : e;  // a bad index stops the walk (nothing written beyond it)
}

}  // namespace detail
}  // namespace pocket
