// aten::cat(Tensor[] tensors, int dim=0) -> Tensor
#include "shape_util.h"

namespace pocket {

// Like torch, 1-d tensors of size 0 are skipped whatever the other shapes; inputs of another
// dtype than the output (type promotion) are converted.
static bool is_legacy_empty(const Tensor& t) { return t.dim == 1 && t.sizes[0] == 0; }

Error op_cat(KernelContext& ctx, Value** args) {
  const TensorList& tensors = args[0]->tensor_list;
  Tensor& out = args[2]->tensor;
  if (tensors.size == 0)
    return ctx.fail(Error::InvalidArgument, "cat: expected a non-empty list of tensors");
  const Tensor* ref = tensors[0];
  for (size_t k = 1; k < tensors.size && is_legacy_empty(*ref); ++k) ref = tensors[k];
  if (ref->dim == 0)
    return ctx.fail(Error::InvalidArgument, "cat: 0-d tensors cannot be concatenated");
  int d = 0;
  Error e = detail::normalize_dim(ctx, "cat", args[1]->i, ref->dim, &d);
  if (e != Error::Ok) return e;
  int64_t sizes[kMaxDim];
  for (int i = 0; i < ref->dim; ++i) sizes[i] = ref->sizes[i];
  sizes[d] = 0;
  for (size_t k = 0; k < tensors.size; ++k) {
    const Tensor& t = *tensors[k];
    if (is_legacy_empty(t) && !is_legacy_empty(*ref)) continue;
    bool same = t.dim == ref->dim;
    for (int i = 0; same && i < t.dim; ++i) same = i == d || t.sizes[i] == ref->sizes[i];
    if (!same) {
      char a[128], b[128];
      return ctx.fail(Error::InvalidArgument,
                      "cat: tensor %zu has shape %s, incompatible with %s at dim %d", k,
                      shape_string(t.sizes, t.dim, a, sizeof a),
                      shape_string(ref->sizes, ref->dim, b, sizeof b), d);
    }
    sizes[d] += t.sizes[d];
  }
  e = detail::resize_output(ctx, "cat", out, sizes, ref->dim);
  if (e != Error::Ok) return e;
  int64_t at = 0;  // position along dim d
  for (size_t k = 0; k < tensors.size; ++k) {
    const Tensor& t = *tensors[k];
    if (is_legacy_empty(t) && !is_legacy_empty(*ref)) continue;
    Tensor dst = detail::make_view(out, at * out.strides[d], t.sizes, out.strides, t.dim);
    detail::convert_elements(dst, t);
    at += t.sizes[d];
  }
  return Error::Ok;
}

}  // namespace pocket
