// aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)
// aten::_embedding_bag_forward_only: the same schema (what torch.export records without autograd)
//
// Bag b reduces the weight rows indices[offsets[b] : offsets[b + 1]] (the last bag ends at the
// end of indices unless include_last_offset) by sum (mode 0, each row times its
// per_sample_weight when given), mean (1) or max (2). Rows equal to padding_idx (>= 0) are
// left out, and an empty bag is 0. The other three outputs serve the backward pass only:
// offset2bag (each index's bag), bag_size (rows per bag) and, for max, the row of each maximum.
#include "nn_util.h"
#include "index_util.h"

namespace pocket {

namespace {

const char* const kOp = "_embedding_bag";

struct Bags {
  int64_t rows = 0, cols = 0, n = 0, count = 0, mode = 0, padding_idx = -1;
};

// y (count, cols), offset2bag (n), bag_size (count), argmax (count, cols) or null.
template <typename T>
void reduce_bags(const Bags& g, const T* w, const Tensor& indices, const Tensor& offsets,
                 const T* psw, T* y, int64_t* offset2bag, int64_t* bag_size, int64_t* argmax) {
  for (int64_t b = 0; b < g.count; ++b) {
    const int64_t begin = detail::load_index(offsets, b * offsets.strides[0]);
    const int64_t end = b + 1 < offsets.sizes[0] ? detail::load_index(offsets, (b + 1) * offsets.strides[0]) : g.n;
    T* yb = y + b * g.cols;
    for (int64_t c = 0; c < g.cols; ++c) yb[c] = T(0);
    int64_t used = 0;
    for (int64_t i = begin; i < end; ++i) {
      offset2bag[i] = b;
      const int64_t r = detail::load_index(indices, i * indices.strides[0]);
      if (r == g.padding_idx) continue;
      const T* wr = w + r * g.cols;
      const T scale = psw != nullptr ? psw[i] : T(1);
      for (int64_t c = 0; c < g.cols; ++c) {
        if (g.mode != 2) {
          yb[c] += wr[c] * scale;
        } else if (used == 0 || wr[c] > yb[c]) {
          yb[c] = wr[c];
          argmax[b * g.cols + c] = r;
        }
      }
      ++used;
    }
    if (g.mode == 1 && used > 0)
      for (int64_t c = 0; c < g.cols; ++c) yb[c] /= static_cast<T>(used);
    if (g.mode == 2 && used == 0)
      for (int64_t c = 0; c < g.cols; ++c) argmax[b * g.cols + c] = -1;
    bag_size[b] = used;
  }
}

Error check_indices(KernelContext& ctx, const Bags& g, const Tensor& indices, const Tensor& offsets) {
  for (int64_t i = 0; i < g.n; ++i) {
    const int64_t r = detail::load_index(indices, i * indices.strides[0]);
    if (r < 0 || r >= g.rows)
      return ctx.fail(Error::OutOfRange, "%s: index %lld is out of range for a weight of %lld rows",
                      kOp, static_cast<long long>(r), static_cast<long long>(g.rows));
  }
  int64_t prev = 0;
  for (int64_t b = 0; b < offsets.sizes[0]; ++b) {
    const int64_t o = detail::load_index(offsets, b * offsets.strides[0]);
    if ((b == 0 && o != 0) || o < prev || o > g.n)
      return ctx.fail(Error::InvalidArgument,
                      "%s: offsets[%lld] is %lld; offsets must start at 0 and not decrease or pass %lld "
                      "(the number of indices)", kOp, static_cast<long long>(b),
                      static_cast<long long>(o), static_cast<long long>(g.n));
    prev = o;
  }
  return Error::Ok;
}

Error plan(KernelContext& ctx, Value** args, Bags* g) {
  const Tensor &weight = args[0]->tensor, &indices = args[1]->tensor, &offsets = args[2]->tensor;
  char buf[128];
  Error e = detail::expect_float_io(ctx, kOp, weight, args[9]->tensor);
  if (e != Error::Ok) return e;
  if (weight.dim != 2)
    return ctx.fail(Error::InvalidArgument, "%s: weight has shape %s, expected (rows, cols)", kOp,
                    shape_string(weight.sizes, weight.dim, buf, sizeof buf));
  const Tensor* ints[2] = {&indices, &offsets};
  const char* names[2] = {"indices", "offsets"};
  for (int k = 0; k < 2; ++k) {
    e = detail::expect_index_tensor(ctx, kOp, *ints[k]);
    if (e != Error::Ok) return e;
    if (ints[k]->dim != 1)
      return ctx.fail(Error::InvalidArgument, "%s: %s has shape %s, expected 1 dim", kOp, names[k],
                      shape_string(ints[k]->sizes, ints[k]->dim, buf, sizeof buf));
  }
  g->rows = weight.sizes[0], g->cols = weight.sizes[1], g->n = indices.sizes[0];
  g->mode = args[4]->i, g->padding_idx = args[8]->i < 0 ? -1 : args[8]->i;
  g->count = offsets.sizes[0] - (args[7]->b ? 1 : 0);
  if (g->mode < 0 || g->mode > 2)
    return ctx.fail(Error::InvalidArgument, "%s: mode is %lld, expected 0 (sum), 1 (mean) or 2 (max)",
                    kOp, static_cast<long long>(g->mode));
  if (g->count < 0)
    return ctx.fail(Error::InvalidArgument, "%s: include_last_offset needs at least one offset", kOp);
  if (!args[6]->is_none()) {
    if (g->mode != 0)
      return ctx.fail(Error::InvalidArgument, "%s: per_sample_weights need mode 0 (sum), got mode %lld",
                      kOp, static_cast<long long>(g->mode));
    e = detail::expect_vector(ctx, kOp, "per_sample_weights", args[6]->tensor, g->n, weight.dtype);
    if (e != Error::Ok) return e;
  }
  return check_indices(ctx, *g, indices, offsets);
}

}  // namespace

Error op_embedding_bag(KernelContext& ctx, Value** args) {
  Bags g;
  Error e = plan(ctx, args, &g);
  Tensor &out = args[9]->tensor, &offset2bag = args[10]->tensor, &bag_size = args[11]->tensor;
  Tensor& argmax = args[12]->tensor;
  const int64_t out_sizes[2] = {g.count, g.cols};
  if (e == Error::Ok) e = detail::resize_output(ctx, kOp, out, out_sizes, 2);
  if (e != Error::Ok) return e;
  // The backward-only outputs keep the shapes the exporter planned (torch's meta shapes vary
  // by mode): computed in temp memory, copied to the outputs whose size matches, else zero.
  const int64_t aux_numel[3] = {g.n, g.count, g.mode == 2 ? g.count * g.cols : 0};
  int64_t* aux_data = static_cast<int64_t*>(
      ctx.allocate_temp(static_cast<size_t>(aux_numel[0] + aux_numel[1] + aux_numel[2] + 1) * sizeof(int64_t)));
  if (aux_data == nullptr)
    return ctx.fail(Error::OutOfMemory, "%s: no temp memory for the bag indices", kOp);
  for (int64_t i = 0; i < aux_numel[0] + aux_numel[1] + aux_numel[2]; ++i) aux_data[i] = 0;
  int64_t* aux_at[3] = {aux_data, aux_data + g.n, aux_data + g.n + g.count};
  Error dispatched = detail::dispatch_float(ctx, kOp, out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *w = nullptr, *psw = nullptr;
    e = detail::contiguous_data(ctx, kOp, "weight", args[0]->tensor, &w);
    if (e == Error::Ok && !args[6]->is_none())
      e = detail::contiguous_data(ctx, kOp, "per_sample_weights", args[6]->tensor, &psw);
    if (e == Error::Ok)
      reduce_bags(g, w, args[1]->tensor, args[2]->tensor, psw, out.data_as<T>(), aux_at[0], aux_at[1], aux_at[2]);
  });
  if (dispatched != Error::Ok || e != Error::Ok) return dispatched != Error::Ok ? dispatched : e;
  Tensor* aux[3] = {&offset2bag, &bag_size, &argmax};
  const char* names[3] = {"offset2bag", "bag_size", "max_indices"};
  for (int k = 0; k < 3; ++k) {
    e = detail::expect_dtype(ctx, kOp, names[k], *aux[k], ScalarType::Int64);
    if (e != Error::Ok) return e;
    const bool same = aux[k]->numel() == aux_numel[k];
    for (int64_t i = 0; i < aux[k]->numel(); ++i) aux[k]->data_as<int64_t>()[i] = same ? aux_at[k][i] : 0;
  }
  return Error::Ok;
}

}  // namespace pocket
