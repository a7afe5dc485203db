// Method execution: inputs in, the instruction loop (Steps decoded by method_load.cpp), and
// the checks on what a caller passes.
#include "pocket/method.h"

#include <cstring>
#include <ctime>

#include "method_step.h"

namespace pocket {

static uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

void Method::set_profile(StepProfile* entries) {
  profile_ = entries;
  if (entries == nullptr) return;
  for (size_t i = 0; i < steps_.size; ++i) entries[i] = StepProfile{steps_[i].op_name, steps_[i].source, steps_[i].layer, 0, 0};
}

Error Method::set_input(size_t i, const Tensor& t) {
  TensorSpec spec;
  if (i >= inputs_.size)
    return diag_.fail(Error::OutOfRange, "method '%s': input index %zu out of range (it takes %zu inputs)",
                      name_, i, inputs_.size);
  if (!input_spec(i, &spec))
    return diag_.fail(Error::InvalidArgument, "method '%s': input %zu is not a tensor", name_, i);
  if (t.dtype != spec.dtype)
    return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: expected dtype %s, got %s", name_, i,
                      scalar_type_name(spec.dtype), scalar_type_name(t.dtype));
  char want[128], got[128];
  if (t.dim != spec.dim)
    return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: expected %d dims (shape %s), got %d dims (shape %s)",
                      name_, i, spec.dim, shape_string(spec.max_sizes, spec.dim, want, sizeof want), t.dim,
                      shape_string(t.sizes, t.dim, got, sizeof got));
  for (int d = 0; d < t.dim; ++d) {
    if (t.sizes[d] < spec.min_sizes[d] || t.sizes[d] > spec.max_sizes[d]) {
      shape_string(t.sizes, t.dim, got, sizeof got);
      if (spec.min_sizes[d] == spec.max_sizes[d])
        return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: shape %s, dim %d must be %lld",
                          name_, i, got, d, static_cast<long long>(spec.max_sizes[d]));
      return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: shape %s, dim %d must be between %lld and %lld",
                        name_, i, got, d, static_cast<long long>(spec.min_sizes[d]),
                        static_cast<long long>(spec.max_sizes[d]));
    }
  }
  if (!t.is_contiguous())
    return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: tensor must be contiguous", name_, i);
  if (t.data == nullptr && t.numel() != 0)
    return diag_.fail(Error::InvalidArgument, "method '%s' input %zu: data is NULL", name_, i);
  Tensor& dst = values_[inputs_[i]].tensor;
  dst = t;
  dst.set_contiguous_strides();  // canonical strides for size-1 dims and empty tensors
  dst.capacity = t.nbytes();
  return Error::Ok;
}

// Tensors are copied into the destination's own memory (so a destination never aliases
// read-only constants); other values are copied whole. Tags match (checked at load).
static Error move_value(const Value& from, Value& to) {
  if (!from.is_tensor()) {
    to = from;
    return Error::Ok;
  }
  Tensor& dst = to.tensor;
  Error e = dst.resize(from.tensor.sizes, from.tensor.dim);
  if (e != Error::Ok) return e;
  if (dst.data != from.tensor.data) memmove(dst.data, from.tensor.data, from.tensor.nbytes());
  return Error::Ok;
}

Error Method::execute() {
  KernelContext ctx;
  ctx.diag = &diag_;
  ctx.temp = temp_;
  ctx.threads = threads_;
  ctx.persistent = allocator_;
  for (size_t i = 0; i < inputs_.size; ++i) {
    const Value& v = values_[inputs_[i]];
    if (v.is_tensor() && v.tensor.data == nullptr && v.tensor.numel() != 0)
      return diag_.fail(Error::InvalidArgument, "method '%s': input %zu was not set", name_, i);
  }
  for (size_t pc = 0; pc < steps_.size; ++pc) {
    Step& s = steps_[pc];
    const uint64_t start = profile_ != nullptr ? monotonic_ns() : 0;
    switch (s.kind) {
      case StepKind::Kernel: {
        diag_.clear();
        ctx.state = &s.state;
        ctx.constant_args = s.constant_args;
        Error e = s.fn(ctx, s.args);
        if (temp_ != nullptr) temp_->reset();
        if (e != Error::Ok) {
          unbind_inputs();
          char inner[sizeof diag_.message];
          memcpy(inner, diag_.message, sizeof inner);
          return diag_.fail(e, "method '%s' instruction %zu (%s): %s", name_, pc, s.op_name,
                            inner[0] ? inner : error_name(e));
        }
        break;
      }
      case StepKind::Move: {
        Error e = move_value(values_[s.a], values_[s.b]);
        if (e != Error::Ok) {
          unbind_inputs();
          return diag_.fail(e, "method '%s' instruction %zu: move of value %u into value %u does not fit",
                            name_, pc, s.a, s.b);
        }
        break;
      }
    }
    if (profile_ != nullptr) {
      profile_[pc].calls += 1;
      profile_[pc].nanoseconds += monotonic_ns() - start;
    }
  }
  unbind_inputs();
  return Error::Ok;
}

// Inputs are borrowed only for one execute(): forget them so a later call cannot read
// memory the caller has released.
void Method::unbind_inputs() {
  for (size_t i = 0; i < inputs_.size; ++i) {
    Value& v = values_[inputs_[i]];
    if (v.is_tensor()) v.tensor.data = nullptr;
  }
}

}  // namespace pocket
