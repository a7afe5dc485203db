#include "reduce_util.h"

#include "parallel_util.h"

namespace pocket {
namespace detail {

// Drops size-1 dims and merges dim d into d+1 when they are contiguous with each other.
static int coalesce(int64_t* sizes, int64_t* strides, int dim) {
  int n = 0;
  for (int d = 0; d < dim; ++d) {
    if (sizes[d] == 1) continue;
    if (n > 0 && strides[n - 1] == strides[d] * sizes[d]) {
      sizes[n - 1] *= sizes[d];
      strides[n - 1] = strides[d];
      continue;
    }
    sizes[n] = sizes[d];
    strides[n] = strides[d];
    ++n;
  }
  return n;
}

static void plan_from_mask(const Tensor& in, const bool* reduce, bool keepdim, ReducePlan* p) {
  p->out_dim = p->kept_dim = p->red_dim = 0;
  p->red_numel = 1;
  for (int d = 0; d < in.dim; ++d) {
    if (reduce[d]) {
      if (keepdim) p->out_sizes[p->out_dim++] = 1;
      p->red_sizes[p->red_dim] = in.sizes[d];
      p->red_strides[0][p->red_dim++] = in.strides[d];
      p->red_numel *= in.sizes[d];
    } else {
      p->out_sizes[p->out_dim++] = in.sizes[d];
      p->kept_sizes[p->kept_dim] = in.sizes[d];
      p->kept_strides[0][p->kept_dim++] = in.strides[d];
    }
  }
  p->kept_dim = coalesce(p->kept_sizes, p->kept_strides[0], p->kept_dim);
  p->red_dim = coalesce(p->red_sizes, p->red_strides[0], p->red_dim);
}

Error plan_reduce(KernelContext& ctx, const char* op, const Tensor& in, const Value& dims,
                  bool keepdim, ReducePlan* plan, bool empty_is_all) {
  bool reduce[kMaxDim] = {false};
  if (dims.is_none() || (empty_is_all && dims.int_list.size == 0)) {
    plan_reduce_all(in, keepdim, plan);
    return Error::Ok;
  }
  for (size_t k = 0; k < dims.int_list.size; ++k) {
    int d = 0;
    Error e = normalize_dim(ctx, op, dims.int_list[k], in.dim, &d);
    if (e != Error::Ok) return e;
    if (in.dim == 0) continue;  // dim 0 / -1 of a 0-d tensor reduces nothing
    if (reduce[d])
      return ctx.fail(Error::InvalidArgument, "%s: dim %d appears more than once in the dim list",
                      op, d);
    reduce[d] = true;
  }
  plan_from_mask(in, reduce, keepdim, plan);
  return Error::Ok;
}

Error plan_reduce_dim(KernelContext& ctx, const char* op, const Tensor& in, int64_t dim,
                      bool keepdim, ReducePlan* plan) {
  bool reduce[kMaxDim] = {false};
  int d = 0;
  Error e = normalize_dim(ctx, op, dim, in.dim, &d);
  if (e != Error::Ok) return e;
  if (in.dim > 0) reduce[d] = true;
  plan_from_mask(in, reduce, keepdim, plan);
  return Error::Ok;
}

void plan_reduce_all(const Tensor& in, bool keepdim, ReducePlan* plan) {
  bool reduce[kMaxDim];
  for (int d = 0; d < kMaxDim; ++d) reduce[d] = true;
  plan_from_mask(in, reduce, keepdim, plan);
}

Error expect_nonempty_reduction(KernelContext& ctx, const char* op, const ReducePlan& plan) {
  if (plan.red_numel > 0) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: cannot reduce over a dim of size 0", op);
}

Error sum_result_dtype(KernelContext& ctx, const char* op, const Tensor& in, const Value& dtype,
                       ScalarType* out) {
  if (!dtype.is_none()) {
    if (!is_valid_scalar_type(static_cast<int>(dtype.i)) || dtype.i != static_cast<int>(dtype.i))
      return ctx.fail(Error::InvalidArgument, "%s: dtype %lld is not a valid dtype number", op,
                      static_cast<long long>(dtype.i));
    *out = static_cast<ScalarType>(dtype.i);
    if (*out == ScalarType::Float16 || *out == ScalarType::BFloat16)
      return ctx.fail(Error::Unsupported, "%s: dtype %s is not supported", op,
                      scalar_type_name(*out));
  } else {
    *out = is_floating(in.dtype) ? in.dtype : ScalarType::Int64;
  }
  return Error::Ok;
}

// sum_lines when the last kept dim is contiguous and the reduced dims merge into one (a
// global average pool of a channels-last tensor: the mean over H and W of NHWC): runs of
// adjacent outputs are summed together, one input row at a time, so the loop runs over
// contiguous elements, and the runs are shared among the threads. Each output still adds its
// elements in the same order: the same sums.
template <typename T, typename A>
static bool sum_columns(KernelContext& ctx, const T* x, const ReducePlan& p, Tensor& out, bool mean) {
  if (p.kept_dim < 1 || p.red_dim != 1 || p.kept_strides[0][p.kept_dim - 1] != 1) return false;
  const int64_t inner = p.kept_sizes[p.kept_dim - 1], red = p.red_sizes[0], step = p.red_strides[0][0];
  constexpr int64_t kRun = 256, kShare = 16;  // columns summed together; shared out in units of kShare
  const int64_t units = (inner + kShare - 1) / kShare;
  int64_t o = 0;
  for_each_offset<1>(p.kept_sizes, p.kept_dim - 1, p.kept_strides, [&](const int64_t* base) {
    ctx.parallel_for(units, grain_for(red * kShare), [&, at = base[0], o](int64_t u0, int64_t u1) {
      const int64_t c1 = u1 * kShare < inner ? u1 * kShare : inner;
      A acc[kRun];
      for (int64_t j0 = u0 * kShare; j0 < c1; j0 += kRun) {
        const int64_t n = c1 - j0 < kRun ? c1 - j0 : kRun;
        for (int64_t j = 0; j < n; ++j) acc[j] = 0;
        for (int64_t r = 0; r < red; ++r) {
          const T* row = x + at + r * step + j0;
          for (int64_t j = 0; j < n; ++j) acc[j] += to_acc<A>(row[j]);
        }
        for (int64_t j = 0; j < n; ++j) {
          A v = acc[j];
          if (mean) v = static_cast<A>(static_cast<double>(v) / static_cast<double>(p.red_numel));
          store_as<A>(out.data, out.dtype, o + j0 + j, v);
        }
      }
    });
    o += inner;
  });
  return true;
}

template <typename T, typename A>
static void sum_lines(KernelContext& ctx, const T* x, const ReducePlan& p, Tensor& out, bool mean) {
  if (sum_columns<T, A>(ctx, x, p, out, mean)) return;
  for_each_output(p, [&](int64_t o, int64_t base) {
    A acc = 0;
    for_each_reduced(p, base, [&](int64_t i) { acc += to_acc<A>(x[i]); });
    if (mean) acc = static_cast<A>(static_cast<double>(acc) / static_cast<double>(p.red_numel));
    store_as<A>(out.data, out.dtype, o, acc);
  });
}

Error reduce_sum(KernelContext& ctx, const char* op, const Tensor& in, const ReducePlan& plan,
                 Tensor& out, bool mean) {
  bool float_acc = is_floating(out.dtype);
  return dispatch_dtype(ctx, op, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (float_acc)
      sum_lines<T, double>(ctx, in.data_as<const T>(), plan, out, mean);
    else
      sum_lines<T, uint64_t>(ctx, in.data_as<const T>(), plan, out, mean);
  });
}

}  // namespace detail
}  // namespace pocket
