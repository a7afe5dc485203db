// pocket::lookup_int8(Tensor x, Tensor table) -> Tensor
//
// y[i] = table[x[i] + 128]: an int8 tensor mapped through a table of 256 int8 values. Static
// int8 exports use it for an activation between two int8 convolutions (a SiLU, a hardswish):
// the table holds the activation of each of the 256 values the first one can output, quantized
// as the next one reads its input (exporter/quant/ops.py), so the values stay int8 from one
// convolution to the next.
#include "elementwise_util.h"
#include "parallel_util.h"
#include "parts.h"

namespace pocket {
namespace detail {

void lookup8_portable(const int8_t* x, int8_t* y, const int8_t* t, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) y[i] = t[x[i] + 128];
}

Error lookup_int8_with(KernelContext& ctx, Value** args, Lookup8Fn range) {
  const Tensor& x = args[0]->tensor;
  const Tensor& table = args[1]->tensor;
  Tensor& out = args[2]->tensor;
  const char* names[] = {"x", "table", "out"};
  const Tensor* ts[] = {&x, &table, &out};
  for (int i = 0; i < 3; ++i) {
    Error e = expect_dtype(ctx, "lookup_int8", names[i], *ts[i], ScalarType::Int8);
    if (e != Error::Ok) return e;
  }
  if (table.dim != 1 || table.sizes[0] != 256 || !table.is_contiguous()) {
    char s[96];
    return ctx.fail(Error::InvalidArgument, "lookup_int8: table has shape %s, expected 256 contiguous values",
                    shape_string(table.sizes, table.dim, s, sizeof s));
  }
  Error e = resize_output(ctx, "lookup_int8", out, x.sizes, x.dim);
  if (e != Error::Ok) return e;
  const int8_t* t = table.data_as<const int8_t>();
  if (!flat_like(x, out)) {  // strided: element by element
    auto f = [t](int8_t v) { return t[v + 128]; };
    unary_loop<int8_t, int8_t>(ctx, x, out, f);
    return Error::Ok;
  }
  const int8_t* in = x.data_as<const int8_t>();
  int8_t* y = out.data_as<int8_t>();
  ctx.parallel_for(x.numel(), grain_for(1), [&](int64_t i0, int64_t i1) { range(in, y, t, i0, i1); });
  return Error::Ok;
}

}  // namespace detail

Error op_lookup_int8(KernelContext& ctx, Value** args) {
  return detail::lookup_int8_with(ctx, args, detail::lookup8_portable);
}

}  // namespace pocket
