// pocket::swiglu(Tensor gate, Tensor up) -> Tensor
//
// y = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise; float32, gate and up of
// one shape, contiguous. Parallel over blocks of elements.
#include <cmath>

#include "llm_util.h"
#include "parallel_util.h"

namespace pocket {
namespace detail {

Error prepare_swiglu(KernelContext& ctx, Value** args, SwigluArgs* a) {
  const Tensor& gate = args[0]->tensor;
  const Tensor& up = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  const char* names[] = {"gate", "up", "out"};
  const Tensor* ts[] = {&gate, &up, &out};
  for (int i = 0; i < 3; ++i) {
    Error e = expect_dtype(ctx, "swiglu", names[i], *ts[i], ScalarType::Float32);
    if (e != Error::Ok) return e;
    if (i < 2 && !ts[i]->is_contiguous())
      return ctx.fail(Error::InvalidArgument, "swiglu: %s must be contiguous", names[i]);
  }
  bool same = gate.dim == up.dim;
  for (int d = 0; same && d < gate.dim; ++d) same = gate.sizes[d] == up.sizes[d];
  if (!same) {
    char gs[96], us[96];
    return ctx.fail(Error::InvalidArgument, "swiglu: gate %s and up %s must have one shape",
                    shape_string(gate.sizes, gate.dim, gs, sizeof gs), shape_string(up.sizes, up.dim, us, sizeof us));
  }
  Error e = resize_output(ctx, "swiglu", out, gate.sizes, gate.dim);
  if (e != Error::Ok) return e;
  a->gate = gate.data_as<const float>();
  a->up = up.data_as<const float>();
  a->y = out.data_as<float>();
  a->n = gate.numel();
  return Error::Ok;
}

void swiglu_range(const SwigluArgs& a, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const float g = a.gate[i];
    a.y[i] = g / (1.0f + std::exp(-g)) * a.up[i];
  }
}

void swiglu_with(KernelContext& ctx, const SwigluArgs& a, SwigluRangeFn range) {
  // Chunks of whole 64-element blocks, so a vectorized `range` sees aligned boundaries.
  const int64_t blocks = (a.n + 63) / 64;
  ctx.parallel_for(blocks, grain_for(64 * 20), [&](int64_t b0, int64_t b1) {
    range(a, b0 * 64, b1 * 64 < a.n ? b1 * 64 : a.n);
  });
}

}  // namespace detail

Error op_swiglu(KernelContext& ctx, Value** args) {
  detail::SwigluArgs a;
  Error e = detail::prepare_swiglu(ctx, args, &a);
  if (e == Error::Ok) detail::swiglu_with(ctx, a, detail::swiglu_range);
  return e;
}

}  // namespace pocket
