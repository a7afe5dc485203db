// Driver of pocket::rms_norm, rope and swiglu: the portable kernels' checks and thread
// split (kernels/portable/llm_util.h) around an ISA's row functions (llm_f32_<isa>.cpp).
#include "ukernels.h"

namespace pocket {
namespace detail {

Error rms_norm_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k) {
  RmsNormArgs a;
  Error e = prepare_rms_norm(ctx, args, &a);
  if (e == Error::Ok) rms_norm_with(ctx, a, k.rms_norm);
  return e;
}

Error rope_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k) {
  RopeArgs a;
  Error e = prepare_rope(ctx, args, &a);
  if (e == Error::Ok) rope_with(ctx, a, k.rope);
  return e;
}

Error swiglu_with_kernels(KernelContext& ctx, Value** args, const LlmKernels& k) {
  SwigluArgs a;
  Error e = prepare_swiglu(ctx, args, &a);
  if (e == Error::Ok) swiglu_with(ctx, a, k.swiglu);
  return e;
}

}  // namespace detail
}  // namespace pocket
