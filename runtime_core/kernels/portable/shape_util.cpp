#include "shape_util.h"

#include "convert.h"
#include "index_util.h"

namespace pocket {
namespace detail {

// ---- views and copies

Tensor make_view(const Tensor& t, int64_t offset, const int64_t* sizes, const int64_t* strides,
                 int dim) {
  Tensor v;
  v.dtype = t.dtype;
  v.dim = dim;
  for (int d = 0; d < dim; ++d) v.sizes[d] = sizes[d];
  if (strides == nullptr) {
    v.set_contiguous_strides();
  } else {
    for (int d = 0; d < dim; ++d) v.strides[d] = strides[d];
  }
  v.data = element_ptr(t, offset);
  return v;
}

// Drops size-1 dims and merges each dim into its outer neighbour when both tensors step
// over it contiguously, so most copies become a few long rows. Returns the new dim count.
static int coalesce(const Tensor& a, const Tensor& b, int64_t* sizes, int64_t (*strides)[kMaxDim]) {
  int n = 0;
  for (int d = 0; d < a.dim; ++d) {
    int64_t s = a.sizes[d];
    if (s == 1) continue;
    if (n > 0 && strides[0][n - 1] == a.strides[d] * s && strides[1][n - 1] == b.strides[d] * s) {
      sizes[n - 1] *= s;
      strides[0][n - 1] = a.strides[d];
      strides[1][n - 1] = b.strides[d];
      continue;
    }
    sizes[n] = s;
    strides[0][n] = a.strides[d];
    strides[1][n] = b.strides[d];
    ++n;
  }
  return n;
}

template <size_t kSize>
static void copy_fixed(char* dst, const char* src, const int64_t* sizes, int dim,
                       const int64_t (*strides)[kMaxDim]) {
  for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    std::memmove(dst + o[0] * static_cast<int64_t>(kSize), src + o[1] * static_cast<int64_t>(kSize),
                kSize);
  });
}

void copy_elements(const Tensor& dst, const Tensor& src) {
  if (src.numel() == 0) return;
  int64_t es = static_cast<int64_t>(element_size(src.dtype));
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  char* d = static_cast<char*>(dst.data);
  const char* s = static_cast<const char*>(src.data);
  if (dim == 0) {
    if (d != s) copy_element(d, s, static_cast<size_t>(es));
    return;
  }
  if (strides[0][dim - 1] == 1 && strides[1][dim - 1] == 1) {
    if (dim == 1 && d == s) return;  // copying a contiguous tensor onto itself
    size_t row = static_cast<size_t>(sizes[dim - 1] * es);
    for_each_offset<2>(sizes, dim - 1, strides,
                       [&](const int64_t* o) { std::memmove(d + o[0] * es, s + o[1] * es, row); });
    return;
  }
  switch (es) {
    case 1: copy_fixed<1>(d, s, sizes, dim, strides); break;
    case 2: copy_fixed<2>(d, s, sizes, dim, strides); break;
    case 4: copy_fixed<4>(d, s, sizes, dim, strides); break;
    default: copy_fixed<8>(d, s, sizes, dim, strides); break;
  }
}

void convert_elements(const Tensor& dst, const Tensor& src) {
  if (dst.dtype == src.dtype) return copy_elements(dst, src);
  if (src.numel() == 0) return;
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  ScalarType dt = dst.dtype, st = src.dtype;
  void* d = dst.data;
  const void* s = src.data;
  if (st == ScalarType::Float32 && (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)) {
    uint16_t (*round)(float) = dt == ScalarType::Float16 ? float_to_half : float_to_bfloat16;
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      static_cast<uint16_t*>(d)[o[0]] = round(static_cast<const float*>(s)[o[1]]);
    });
    return;
  }
  if (dt == ScalarType::Float32 && (st == ScalarType::Float16 || st == ScalarType::BFloat16)) {
    float (*widen)(uint16_t) = st == ScalarType::Float16 ? half_to_float : bfloat16_to_float;
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      static_cast<float*>(d)[o[0]] = widen(static_cast<const uint16_t*>(s)[o[1]]);
    });
    return;
  }
  if (is_integral(st)) {
    for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
      store_int64(d, dt, o[0], load_int64(s, st, o[1]));
    });
    return;
  }
  for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
    store_double(d, dt, o[0], load_double(s, st, o[1]));
  });
}

template <typename T>
static void accumulate_typed(const Tensor& dst, const Tensor& src, const int64_t* sizes, int dim,
                             const int64_t (*strides)[kMaxDim]) {
  T* d = dst.data_as<T>();
  const T* s = src.data_as<T>();
  for_each_offset<2>(sizes, dim, strides,
                     [&](const int64_t* o) { d[o[0]] = static_cast<T>(d[o[0]] + s[o[1]]); });
}

void accumulate_elements(const Tensor& dst, const Tensor& src) {
  if (src.numel() == 0) return;
  int64_t sizes[kMaxDim];
  int64_t strides[2][kMaxDim];
  int dim = coalesce(dst, src, sizes, strides);
  switch (dst.dtype) {
    case ScalarType::Float32: return accumulate_typed<float>(dst, src, sizes, dim, strides);
    case ScalarType::Float64: return accumulate_typed<double>(dst, src, sizes, dim, strides);
    case ScalarType::Int64: return accumulate_typed<int64_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int32: return accumulate_typed<int32_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int16: return accumulate_typed<int16_t>(dst, src, sizes, dim, strides);
    case ScalarType::Int8: return accumulate_typed<int8_t>(dst, src, sizes, dim, strides);
    case ScalarType::UInt8: return accumulate_typed<uint8_t>(dst, src, sizes, dim, strides);
    case ScalarType::Bool: return accumulate_typed<bool>(dst, src, sizes, dim, strides);
    case ScalarType::Float16:
    case ScalarType::BFloat16: {
      ScalarType t = dst.dtype;
      for_each_offset<2>(sizes, dim, strides, [&](const int64_t* o) {
        double sum = load_double(dst.data, t, o[0]) + load_double(src.data, t, o[1]);
        store_double(dst.data, t, o[0], static_cast<float>(sum));
      });
      return;
    }
  }
}

Error copy_to_output(KernelContext& ctx, const char* op, const Tensor& view, Tensor& out,
                     const int64_t* sizes, int dim) {
  Error e = expect_same_dtype(ctx, op, view, out);
  if (e != Error::Ok) return e;
  e = resize_output(ctx, op, out, sizes, dim);
  if (e != Error::Ok) return e;
  if (out.numel() != view.numel())
    return ctx.fail(Error::Internal, "%s: %lld elements copied into %lld", op,
                    static_cast<long long>(view.numel()), static_cast<long long>(out.numel()));
  copy_elements(make_view(out, 0, view.sizes, nullptr, view.dim), view);
  return Error::Ok;
}

Error copy_into_view(KernelContext& ctx, const char* op, const Tensor& view, const Tensor& src) {
  bool same = src.dim == view.dim;
  for (int d = 0; same && d < src.dim; ++d) same = src.sizes[d] == view.sizes[d];
  if (!same) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument, "%s: src has shape %s, expected %s", op,
                    shape_string(src.sizes, src.dim, a, sizeof a),
                    shape_string(view.sizes, view.dim, b, sizeof b));
  }
  copy_elements(view, src);
  return Error::Ok;
}

Error broadcast_view(KernelContext& ctx, const char* op, const char* what, const Tensor& t,
                     const int64_t* sizes, int dim, Tensor* view) {
  int lead = 0;  // leading size-1 dims of t beyond `dim`
  while (t.dim - lead > dim && t.sizes[lead] == 1) ++lead;
  bool ok = t.dim - lead <= dim;
  for (int d = 0; ok && d < t.dim - lead; ++d) {
    int64_t s = t.sizes[lead + d];
    ok = s == 1 || s == sizes[dim - (t.dim - lead) + d];
  }
  if (!ok) {
    char a[128], b[128];
    return ctx.fail(Error::InvalidArgument, "%s: %s of shape %s cannot be broadcast to %s", op,
                    what, shape_string(t.sizes, t.dim, a, sizeof a),
                    shape_string(sizes, dim, b, sizeof b));
  }
  *view = make_view(t, 0, sizes, nullptr, dim);
  for (int d = 0; d < dim; ++d) {
    int td = d - (dim - (t.dim - lead));
    view->strides[d] = (td < 0 || t.sizes[lead + td] == 1) ? 0 : t.strides[lead + td];
  }
  return Error::Ok;
}

// ---- argument checks

Error expect_same_dtype(KernelContext& ctx, const char* op, const Tensor& in, const Tensor& out) {
  if (in.dtype == out.dtype) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: input dtype %s differs from output dtype %s", op,
                  scalar_type_name(in.dtype), scalar_type_name(out.dtype));
}

Error check_dtype_arg(KernelContext& ctx, const char* op, const Value& dtype, const Tensor* like,
                      const Tensor& out) {
  if (dtype.is_none() && like == nullptr) return Error::Ok;
  if (!dtype.is_none() && !is_valid_scalar_type(static_cast<int>(dtype.i)))
    return ctx.fail(Error::InvalidArgument, "%s: invalid dtype %lld", op,
                    static_cast<long long>(dtype.i));
  ScalarType want = dtype.is_none() ? like->dtype : static_cast<ScalarType>(dtype.i);
  if (want == out.dtype) return Error::Ok;
  return ctx.fail(Error::InvalidArgument, "%s: dtype %s does not match the output dtype %s", op,
                  scalar_type_name(want), scalar_type_name(out.dtype));
}

Error expect_not_scalar(KernelContext& ctx, const char* op, const Tensor& t) {
  if (t.dim > 0) return Error::Ok;
  return ctx.fail(Error::InvalidArgument,
                  "%s: expected a tensor with at least 1 dim, got a 0-d tensor", op);
}

Error read_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t* sizes,
                 int* dim) {
  if (list.size > static_cast<size_t>(kMaxDim))
    return ctx.fail(Error::Unsupported, "%s: %zu dims given, at most %d are supported", op,
                    list.size, kMaxDim);
  for (size_t i = 0; i < list.size; ++i) {
    sizes[i] = list[i];
    if (sizes[i] < 0)
      return ctx.fail(Error::InvalidArgument, "%s: negative size %lld at dim %zu", op,
                      static_cast<long long>(sizes[i]), i);
  }
  *dim = static_cast<int>(list.size);
  return Error::Ok;
}

Error infer_view_sizes(KernelContext& ctx, const char* op, const IntList& list, int64_t numel,
                       int64_t* sizes, int* dim) {
  if (list.size > static_cast<size_t>(kMaxDim))
    return ctx.fail(Error::Unsupported, "%s: %zu dims given, at most %d are supported", op,
                    list.size, kMaxDim);
  int n = static_cast<int>(list.size);
  int infer = -1;
  int64_t known = 1;
  bool overflow = false;
  for (int i = 0; i < n; ++i) {
    sizes[i] = list[i];
    if (sizes[i] == -1 && infer < 0) {
      infer = i;
    } else if (sizes[i] == -1) {
      return ctx.fail(Error::InvalidArgument, "%s: only one dimension can be inferred (-1)", op);
    } else if (sizes[i] < 0) {
      return ctx.fail(Error::InvalidArgument, "%s: invalid size %lld at dim %d", op,
                      static_cast<long long>(sizes[i]), i);
    } else {
      overflow |= __builtin_mul_overflow(known, sizes[i], &known);
    }
  }
  bool ok = !overflow && (infer >= 0 ? known != 0 && numel % known == 0 : known == numel);
  if (!ok) {
    char buf[128];
    return ctx.fail(Error::InvalidArgument, "%s: shape %s is invalid for %lld elements", op,
                    shape_string(sizes, n, buf, sizeof buf), static_cast<long long>(numel));
  }
  if (infer >= 0) sizes[infer] = numel / known;
  *dim = n;
  return Error::Ok;
}

Error view_to_output(KernelContext& ctx, const char* op, const Tensor& self, const IntList& size,
                     Tensor& out) {
  int64_t sizes[kMaxDim];
  int dim = 0;
  Error e = infer_view_sizes(ctx, op, size, self.numel(), sizes, &dim);
  if (e != Error::Ok) return e;
  return copy_to_output(ctx, op, self, out, sizes, dim);
}

Error slice_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                 const Value& start, const Value& end, int64_t step, Tensor* view) {
  Error e = expect_not_scalar(ctx, op, self);
  int d = 0;
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, self.dim, &d);
  if (e != Error::Ok) return e;
  if (step <= 0)
    return ctx.fail(Error::InvalidArgument, "%s: step must be positive, got %lld", op,
                    static_cast<long long>(step));
  int64_t size = self.sizes[d];
  int64_t lo = start.is_none() ? 0 : start.i;
  int64_t hi = end.is_none() ? size : end.i;
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = lo < 0 ? 0 : (lo > size ? size : lo);
  hi = hi < lo ? lo : (hi > size ? size : hi);
  int64_t len = hi == lo ? 0 : (hi - lo - 1) / step + 1;
  *view = self;
  view->sizes[d] = len;
  if (len > 1) view->strides[d] = self.strides[d] * step;  // step < size here: no overflow
  if (len > 0) view->data = element_ptr(self, lo * self.strides[d]);
  return Error::Ok;
}

Error select_view(KernelContext& ctx, const char* op, const Tensor& self, int64_t dim,
                  int64_t index, Tensor* view) {
  Error e = expect_not_scalar(ctx, op, self);
  int d = 0;
  if (e == Error::Ok) e = normalize_dim(ctx, op, dim, self.dim, &d);
  int64_t i = 0;
  if (e == Error::Ok) e = wrap_index(ctx, op, index, d, self.sizes[d], &i);
  if (e != Error::Ok) return e;
  *view = self;
  view->dim = self.dim - 1;
  for (int k = d; k < view->dim; ++k) {
    view->sizes[k] = self.sizes[k + 1];
    view->strides[k] = self.strides[k + 1];
  }
  view->data = element_ptr(self, i * self.strides[d]);
  return Error::Ok;
}

}  // namespace detail
}  // namespace pocket
