// Method loading and binding: checks every value and instruction of a method against the
// program and the kernel registry, binds values to arenas, constants and buffers, and decodes
// the instructions into Steps. Execution is in method.cpp.
#include "pocket/method.h"

#include <cstring>

#include "method_step.h"
#include "program_generated.h"

namespace pocket {

namespace {

using FbValues = flatbuffers::Vector<flatbuffers::Offset<fb::Value>>;

const fb::Method* fb_method(const void* p) { return static_cast<const fb::Method*>(p); }

template <typename T>
T* alloc_array(MemoryAllocator* a, size_t n) {
  if (n == 0) return nullptr;
  void* p = a->allocate(n * sizeof(T), alignof(T) < 8 ? 8 : alignof(T));
  if (p == nullptr) return nullptr;
  T* t = static_cast<T*>(p);
  for (size_t i = 0; i < n; ++i) new (&t[i]) T();
  return t;
}

// Checks that every index of `items` names a value of kind `want` (or is -1 when allowed).
template <typename Index>
bool list_items_ok(const flatbuffers::Vector<Index>* items, const FbValues* values,
                   fb::ValueKind want, bool allow_none) {
  if (items == nullptr) return true;
  for (Index idx : *items) {
    if (allow_none && static_cast<int64_t>(idx) == -1) continue;
    if (static_cast<int64_t>(idx) < 0 || static_cast<uint64_t>(idx) >= values->size()) return false;
    if (values->Get(static_cast<uint32_t>(idx))->kind_type() != want) return false;
  }
  return true;
}

// The flatbuffers Verifier checks the alignment of table fields but not of 8-byte vector
// elements (a corrupted offset can leave them 4-aligned): check before reading them.
template <typename T>
bool aligned(const flatbuffers::Vector<T>* v) {
  return v == nullptr || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
}

struct TensorCheck {
  const Program& program;
  const MethodMemory& memory;
  Span<uint8_t*> arenas;
  Span<uint64_t> arena_sizes;
  const char* method;
  Diag& diag;

  Error bind(uint32_t index, const fb::Tensor* t, Tensor* out) const {
    if (!aligned(t->sizes()) || !aligned(t->min_sizes()))
      return diag.fail(Error::InvalidProgram, "method '%s' value %u: sizes are misaligned", method, index);
    if (!is_valid_scalar_type(static_cast<int>(t->dtype())))
      return diag.fail(Error::InvalidProgram, "method '%s' value %u: unknown dtype %d", method,
                       index, static_cast<int>(t->dtype()));
    out->dtype = static_cast<ScalarType>(t->dtype());
    uint32_t dim = t->sizes() ? t->sizes()->size() : 0;
    const ShapeCheck shape = check_shape(t->sizes() ? t->sizes()->data() : nullptr, dim);
    switch (shape.problem) {
      case ShapeCheck::Problem::None: break;
      case ShapeCheck::Problem::TooManyDims:
        return diag.fail(Error::Unsupported, "method '%s' value %u: %u dims (at most %d supported)",
                         method, index, dim, kMaxDim);
      case ShapeCheck::Problem::BadSize:
        return diag.fail(Error::InvalidProgram, "method '%s' value %u: size %lld of dim %u is invalid",
                         method, index, static_cast<long long>(t->sizes()->Get(shape.dim)), shape.dim);
      case ShapeCheck::Problem::TooLarge:
        return diag.fail(Error::InvalidProgram, "method '%s' value %u: too many elements", method, index);
    }
    out->dim = static_cast<int32_t>(dim);
    for (uint32_t d = 0; d < dim; ++d) out->sizes[d] = t->sizes()->Get(d);
    const uint64_t numel = shape.numel;
    if (t->min_sizes() && t->min_sizes()->size() != 0) {
      if (t->min_sizes()->size() != dim)
        return diag.fail(Error::InvalidProgram, "method '%s' value %u: %u min sizes for %u dims",
                         method, index, t->min_sizes()->size(), dim);
      for (uint32_t d = 0; d < dim; ++d) {
        int64_t lo = t->min_sizes()->Get(d);
        if (lo < 0 || lo > out->sizes[d])
          return diag.fail(Error::InvalidProgram, "method '%s' value %u: dim %u bounds [%lld, %lld] are invalid",
                           method, index, d, static_cast<long long>(lo), static_cast<long long>(out->sizes[d]));
      }
    }
    if (t->dim_order() != nullptr)
      for (uint32_t d = 0; d < t->dim_order()->size(); ++d)
        if (t->dim_order()->size() != dim || t->dim_order()->Get(d) != d)
          return diag.fail(Error::Unsupported, "method '%s' value %u: only contiguous dim order is supported",
                           method, index);
    out->set_contiguous_strides();
    uint64_t need = numel * element_size(out->dtype);
    if (t->nbytes() < need && t->location() != fb::Location::None)
      return diag.fail(Error::InvalidProgram, "method '%s' value %u: %llu bytes reserved, shape needs %llu",
                       method, index, static_cast<unsigned long long>(t->nbytes()),
                       static_cast<unsigned long long>(need));
    out->capacity = static_cast<size_t>(t->nbytes());
    return place(index, t, out);
  }

  Error place(uint32_t index, const fb::Tensor* t, Tensor* out) const {
    uint64_t off = t->offset(), n = t->nbytes();
    // Segments and arenas start 64-byte aligned; kernels need each element naturally aligned.
    if (off % element_size(out->dtype) != 0)
      return diag.fail(Error::InvalidProgram,
                       "method '%s' value %u: offset %llu is not a multiple of the %s element size", method,
                       index, static_cast<unsigned long long>(off), scalar_type_name(out->dtype));
    switch (t->location()) {
      case fb::Location::None:
        out->data = nullptr;
        out->capacity = 0;
        return Error::Ok;
      case fb::Location::Constant: {
        Span<const uint8_t> seg = program.segment(t->index());
        if (t->index() >= program.num_segments() || off > seg.size || n > seg.size - off)
          return diag.fail(Error::InvalidProgram,
                           "method '%s' value %u: constant at segment %u offset %llu (%llu bytes) is out of range",
                           method, index, t->index(), static_cast<unsigned long long>(off),
                           static_cast<unsigned long long>(n));
        out->data = const_cast<uint8_t*>(seg.data + off);
        return Error::Ok;
      }
      case fb::Location::Arena:
        if (t->index() >= arenas.size || off > arena_sizes[t->index()] ||
            n > arena_sizes[t->index()] - off)
          return diag.fail(Error::InvalidProgram,
                           "method '%s' value %u: arena %u offset %llu (%llu bytes) is out of range",
                           method, index, t->index(), static_cast<unsigned long long>(off),
                           static_cast<unsigned long long>(n));
        out->data = arenas[t->index()] + off;
        return Error::Ok;
      case fb::Location::Buffer:
        if (t->index() >= program.num_buffers() || t->index() >= memory.buffers.size ||
            memory.buffers[t->index()] == nullptr || off != 0 || n > program.buffer_nbytes(t->index()))
          return diag.fail(Error::InvalidProgram,
                           "method '%s' value %u: mutable buffer %u is out of range or has no memory",
                           method, index, t->index());
        out->data = memory.buffers[t->index()];
        return Error::Ok;
    }
    return diag.fail(Error::InvalidProgram, "method '%s' value %u: unknown tensor location %d", method,
                     index, static_cast<int>(t->location()));
  }
};

// Kernel outputs must be planned memory: never constants (maybe mapped read-only) or
// caller-owned inputs. Tensor-list outputs are checked item by item.
bool is_writable(const fb::Method* m, uint32_t idx) {
  const fb::Value* v = m->values()->Get(idx);
  if (const fb::Tensor* t = v->kind_as_Tensor())
    return t->location() == fb::Location::Arena || t->location() == fb::Location::Buffer;
  if (const fb::TensorList* list = v->kind_as_TensorList()) {
    if (list->items() == nullptr) return true;
    for (uint32_t item : *list->items())
      if (!is_writable(m, item)) return false;  // items were checked to be tensors
  }
  return true;
}

}  // namespace

Error Method::load_values(const Program& program, const void* fbm, const MethodMemory& memory,
                          Diag& diag) {
  const fb::Method* m = fb_method(fbm);
  const FbValues* values = m->values();
  uint32_t n = values ? values->size() : 0;
  values_ = {alloc_array<Value>(memory.allocator, n), n};
  if (n != 0 && values_.data == nullptr) return diag.fail(Error::OutOfMemory, "method '%s': no memory for %u values", name_, n);
  TensorCheck tc{program, memory, arenas_, arena_sizes_, name_, diag};
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Value* fv = values->Get(i);
    // The Verifier accepts a union whose type is set but whose table is absent.
    if (fv->kind_type() != fb::ValueKind::NONE && fv->kind() == nullptr)
      return diag.fail(Error::InvalidProgram, "method '%s' value %u: value of kind %d has no contents", name_, i,
                       static_cast<int>(fv->kind_type()));
    Value& v = values_[i];
    bool ok = true;
    switch (fv->kind_type()) {
      case fb::ValueKind::Null: v.tag = Value::Tag::None; break;
      case fb::ValueKind::Int: v.tag = Value::Tag::Int; v.i = fv->kind_as_Int()->value(); break;
      case fb::ValueKind::Double: v.tag = Value::Tag::Double; v.d = fv->kind_as_Double()->value(); break;
      case fb::ValueKind::Bool: v.tag = Value::Tag::Bool; v.b = fv->kind_as_Bool()->value(); break;
      case fb::ValueKind::String: {
        auto* s = fv->kind_as_String()->value();
        v.tag = Value::Tag::String;
        v.str.data = s ? s->c_str() : "";
        v.str.size = s ? s->size() : 0;
        break;
      }
      case fb::ValueKind::IntList: {
        auto* items = fv->kind_as_IntList()->items();
        ok = list_items_ok(items, values, fb::ValueKind::Int, false);
        v.tag = Value::Tag::IntList;
        v.int_list = IntList{items ? items->data() : nullptr, items ? items->size() : 0u, values_.data};
        break;
      }
      case fb::ValueKind::DoubleList: {
        auto* items = fv->kind_as_DoubleList()->items();
        ok = aligned(items);
        v.tag = Value::Tag::DoubleList;
        v.double_list = DoubleList{items ? items->data() : nullptr, items ? items->size() : 0u};
        break;
      }
      case fb::ValueKind::BoolList: {
        auto* items = fv->kind_as_BoolList()->items();
        v.tag = Value::Tag::BoolList;
        v.bool_list = BoolList{items ? reinterpret_cast<const uint8_t*>(items->data()) : nullptr,
                               items ? items->size() : 0u};
        break;
      }
      case fb::ValueKind::TensorList: {
        auto* items = fv->kind_as_TensorList()->items();
        ok = list_items_ok(items, values, fb::ValueKind::Tensor, false);
        v.tag = Value::Tag::TensorList;
        v.tensor_list = TensorList{items ? reinterpret_cast<const int32_t*>(items->data()) : nullptr,
                                   items ? items->size() : 0u, values_.data};
        break;
      }
      case fb::ValueKind::OptionalTensorList: {
        auto* items = fv->kind_as_OptionalTensorList()->items();
        ok = list_items_ok(items, values, fb::ValueKind::Tensor, true);
        v.tag = Value::Tag::OptionalTensorList;
        v.tensor_list = TensorList{items ? items->data() : nullptr, items ? items->size() : 0u, values_.data};
        break;
      }
      case fb::ValueKind::Tensor: {
        v.tag = Value::Tag::Tensor;
        new (&v.tensor) Tensor();
        Error e = tc.bind(i, fv->kind_as_Tensor(), &v.tensor);
        if (e != Error::Ok) return e;
        break;
      }
      default:
        return diag.fail(Error::InvalidProgram, "method '%s' value %u: unknown value kind %d", name_, i,
                         static_cast<int>(fv->kind_type()));
    }
    if (!ok)
      return diag.fail(Error::InvalidProgram,
                       "method '%s' value %u: list is misaligned or an item is out of range or of the wrong kind",
                       name_, i);
  }
  return Error::Ok;
}

// *out = names[index] (a source line or a layer of step `pc`); index -1: none, "".
static Error name_of(const char* method, uint32_t pc, const char* what,
                     const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* names, int32_t index,
                     const char** out, Diag& diag) {
  if (index < 0) return Error::Ok;
  uint32_t n = names != nullptr ? names->size() : 0;
  if (static_cast<uint32_t>(index) >= n)
    return diag.fail(Error::InvalidProgram, "method '%s' instruction %u: %s %d out of range (%u of them)", method, pc,
                     what, index, n);
  const flatbuffers::String* name = names->Get(static_cast<uint32_t>(index));
  *out = name != nullptr ? name->c_str() : "";
  return Error::Ok;
}

Error Method::load_steps(const void* fbm, const MethodMemory& memory, Diag& diag) {
  const fb::Method* m = fb_method(fbm);
  Span<const KernelEntry> table = memory.kernels;
  uint32_t n_ops = m->operators() ? m->operators()->size() : 0;
  const KernelEntry** resolved = alloc_array<const KernelEntry*>(memory.allocator, n_ops);
  if (n_ops != 0 && resolved == nullptr) return diag.fail(Error::OutOfMemory, "method '%s': out of memory", name_);
  for (uint32_t i = 0; i < n_ops; ++i) {
    const fb::Operator* op = m->operators()->Get(i);
    const char* name = op->name() ? op->name()->c_str() : "";
    const char* overload = op->overload() ? op->overload()->c_str() : "";
    resolved[i] = find_kernel(table, name, overload);
    if (resolved[i] == nullptr) return fail_unknown_op(diag, name_, name, overload, i);
  }
  uint32_t n = m->steps() ? m->steps()->size() : 0;
  steps_ = {alloc_array<Step>(memory.allocator, n), n};
  if (n != 0 && steps_.data == nullptr) return diag.fail(Error::OutOfMemory, "method '%s': out of memory", name_);
  for (uint32_t pc = 0; pc < n; ++pc) {
    const fb::Step* s = m->steps()->Get(pc);
    if (s->instruction_type() != fb::Instruction::NONE && s->instruction() == nullptr)
      return diag.fail(Error::InvalidProgram, "method '%s' instruction %u: instruction of type %d has no contents",
                       name_, pc, static_cast<int>(s->instruction_type()));
    Step& step = steps_[pc];
    switch (s->instruction_type()) {
      case fb::Instruction::KernelCall: {
        const fb::KernelCall* call = s->instruction_as_KernelCall();
        if (call->op() >= n_ops)
          return diag.fail(Error::InvalidProgram, "method '%s' instruction %u: operator %u out of range (%u operators)",
                           name_, pc, call->op(), n_ops);
        const KernelEntry* k = resolved[call->op()];
        uint32_t nargs = call->args() ? call->args()->size() : 0;
        if (nargs != signature_arity(k->signature))
          return diag.fail(Error::InvalidProgram, "method '%s' instruction %u (%s): %u arguments, the kernel takes %zu",
                           name_, pc, k->name, nargs, signature_arity(k->signature));
        step = Step{StepKind::Kernel, 0, 0, k->fn, alloc_array<Value*>(memory.allocator, nargs + 1), k->name};
        if (step.args == nullptr) return diag.fail(Error::OutOfMemory, "method '%s': out of memory", name_);
        bool output = false;
        for (uint32_t a = 0, c = 0; a < nargs; ++a, ++c) {
          if (k->signature[c] == '>') { output = true; ++c; }
          uint32_t idx = call->args()->Get(a);
          if (idx >= values_.size || !value_matches(values_[idx], k->signature[c]))
            return diag.fail(Error::InvalidProgram,
                             "method '%s' instruction %u (%s): argument %u (value %u) is %s, expected kind '%c'",
                             name_, pc, k->name, a, idx,
                             idx < values_.size ? value_tag_name(values_[idx].tag) : "out of range", k->signature[c]);
          if (output && !is_writable(m, idx))
            return diag.fail(Error::InvalidProgram,
                             "method '%s' instruction %u (%s): output value %u is not writable memory",
                             name_, pc, k->name, idx);
          step.args[a] = &values_[idx];
          const fb::Tensor* t = m->values()->Get(idx)->kind_as_Tensor();
          if (a < 64 && t != nullptr && t->location() == fb::Location::Constant) step.constant_args |= uint64_t{1} << a;
        }
        break;
      }
      case fb::Instruction::Move: {
        auto* mv = s->instruction_as_Move();
        if (mv->from() >= values_.size || mv->to() >= values_.size)
          return diag.fail(Error::InvalidProgram, "method '%s' instruction %u: move value index out of range", name_, pc);
        const Value& from = values_[mv->from()];
        const Value& to = values_[mv->to()];
        bool writable = !to.is_tensor() ||
                        m->values()->Get(mv->to())->kind_as_Tensor()->location() == fb::Location::Arena ||
                        m->values()->Get(mv->to())->kind_as_Tensor()->location() == fb::Location::Buffer;
        if (from.tag != to.tag || !writable || (from.is_tensor() && from.tensor.dtype != to.tensor.dtype))
          return diag.fail(Error::InvalidProgram,
                           "method '%s' instruction %u: cannot move value %u (%s) into value %u (%s)", name_,
                           pc, mv->from(), value_tag_name(from.tag), mv->to(), value_tag_name(to.tag));
        step = Step{StepKind::Move, mv->from(), mv->to()};
        step.op_name = "move";
        break;
      }
      default:
        return diag.fail(Error::InvalidProgram, "method '%s' instruction %u: unknown instruction type %u (this runtime runs KernelCall and Move)",
                         name_, pc, static_cast<unsigned>(s->instruction_type()));
    }
    Error e = name_of(name_, pc, "source", m->sources(), s->source(), &step.source, diag);
    if (e == Error::Ok) e = name_of(name_, pc, "layer", m->layers(), s->layer(), &step.layer, diag);
    if (e != Error::Ok) return e;
  }
  return Error::Ok;
}

static Error check_io(const char* method, const char* what, const flatbuffers::Vector<uint32_t>* io,
                      size_t n_values, Diag& diag) {
  if (io == nullptr) return Error::Ok;
  for (uint32_t i = 0; i < io->size(); ++i)
    if (io->Get(i) >= n_values)
      return diag.fail(Error::InvalidProgram, "method '%s' %s %u: value index %u out of range (%zu values)",
                       method, what, i, io->Get(i), n_values);
  return Error::Ok;
}

// An arena may not be larger than the tensors placed in it (their end rounded up to 64 bytes,
// as the planner does): each arena is allocated whole, so an unchecked size would let a
// corrupted file claim any amount of memory.
static Error check_arena_sizes(const char* method, const fb::Method* m, Diag& diag) {
  uint32_t n_arenas = m->arenas() ? m->arenas()->size() : 0;
  for (uint32_t a = 0; a < n_arenas; ++a) {
    uint64_t extent = 0;
    if (m->values() != nullptr)
      for (const fb::Value* v : *m->values()) {
        const fb::Tensor* t = v->kind_as_Tensor();
        if (t == nullptr || t->location() != fb::Location::Arena || t->index() != a) continue;
        uint64_t n = t->nbytes() ? t->nbytes() : 1;
        if (n < (uint64_t(1) << 48) && t->offset() < (uint64_t(1) << 48) && t->offset() + n > extent)
          extent = t->offset() + n;  // tensors out of range fail later, with a better message
      }
    uint64_t limit = extent < 64 ? 64 : (extent + 63) / 64 * 64;
    if (m->arenas()->Get(a) > limit)
      return diag.fail(Error::InvalidProgram, "method '%s': arena %u has %llu bytes, its tensors use %llu",
                       method, a, static_cast<unsigned long long>(m->arenas()->Get(a)),
                       static_cast<unsigned long long>(extent));
  }
  return Error::Ok;
}

// A tensor without storage (Location::None) gets memory only from set_input, so each must be a
// method input; otherwise a kernel would read through a null pointer.
static Error check_storage(const char* method, const fb::Method* m, Diag& diag) {
  if (m->values() == nullptr) return Error::Ok;
  for (uint32_t i = 0; i < m->values()->size(); ++i) {
    const fb::Tensor* t = m->values()->Get(i)->kind_as_Tensor();
    if (t == nullptr || t->location() != fb::Location::None) continue;
    bool is_input = false;
    if (m->inputs() != nullptr)
      for (uint32_t in : *m->inputs()) is_input = is_input || in == i;
    if (!is_input)
      return diag.fail(Error::InvalidProgram,
                       "method '%s' value %u: tensor has no storage (location None) but is not a method input",
                       method, i);
  }
  // Inputs are unbound after each execute, so an output needs storage of its own (the
  // exporter copies an input that is returned into an arena tensor).
  if (m->outputs() != nullptr)
    for (uint32_t o = 0; o < m->outputs()->size(); ++o) {
      const fb::Tensor* t = m->values()->Get(m->outputs()->Get(o))->kind_as_Tensor();
      if (t != nullptr && t->location() == fb::Location::None)
        return diag.fail(Error::InvalidProgram, "method '%s' output %u: value %u is an input, not a tensor with storage",
                         method, o, m->outputs()->Get(o));
    }
  return Error::Ok;
}

Error Method::load(const Program& program, const char* name, const MethodMemory& memory,
                   Method* out, Diag& diag) {
  if (memory.allocator == nullptr) return diag.fail(Error::InvalidArgument, "MethodMemory.allocator is NULL");
  if (memory.kernels.empty()) return diag.fail(Error::InvalidArgument, "MethodMemory.kernels is empty");
  int index = program.find_method(name);
  if (index < 0)
    return diag.fail(Error::NotFound, "no method named '%s' in the program (it has %zu methods, first '%s')",
                     name ? name : "(null)", program.num_methods(), program.method_name(0));
  const fb::Method* m = static_cast<const fb::Program*>(program.root())->methods()->Get(index);
  Method method;
  method.name_ = m->name()->c_str();
  method.fb_ = m;
  method.temp_ = memory.temp;
  method.allocator_ = memory.allocator;
  method.threads_ = memory.threads;

  if (!aligned(m->arenas())) return diag.fail(Error::InvalidProgram, "method '%s': arena sizes are misaligned", method.name_);
  Error e = check_arena_sizes(method.name_, m, diag);
  if (e != Error::Ok) return e;
  uint32_t n_arenas = m->arenas() ? m->arenas()->size() : 0;
  method.arenas_ = {alloc_array<uint8_t*>(memory.allocator, n_arenas), n_arenas};
  method.arena_sizes_ = {alloc_array<uint64_t>(memory.allocator, n_arenas), n_arenas};
  if (n_arenas != 0 && (method.arenas_.data == nullptr || method.arena_sizes_.data == nullptr))
    return diag.fail(Error::OutOfMemory, "method '%s': out of memory", method.name_);
  for (uint32_t a = 0; a < n_arenas; ++a) {
    uint64_t size = m->arenas()->Get(a);
    method.arena_sizes_[a] = size;
    if (a < memory.arenas.size) {
      if (memory.arenas[a].size < size)
        return diag.fail(Error::InvalidArgument, "method '%s': caller arena %u has %zu bytes, needs %llu",
                         method.name_, a, memory.arenas[a].size, static_cast<unsigned long long>(size));
      method.arenas_[a] = memory.arenas[a].data;
    } else {
      if (size > (uint64_t(1) << 40))
        return diag.fail(Error::InvalidProgram, "method '%s': arena %u size %llu is implausible",
                         method.name_, a, static_cast<unsigned long long>(size));
      method.arenas_[a] = static_cast<uint8_t*>(memory.allocator->allocate(size ? size : 1, 64));
      if (method.arenas_[a] == nullptr)
        return diag.fail(Error::OutOfMemory, "method '%s': cannot allocate arena %u (%llu bytes)",
                         method.name_, a, static_cast<unsigned long long>(size));
    }
  }
  e = method.load_values(program, m, memory, diag);
  if (e != Error::Ok) return e;
  e = check_io(method.name_, "input", m->inputs(), method.values_.size, diag);
  if (e != Error::Ok) return e;
  e = check_io(method.name_, "output", m->outputs(), method.values_.size, diag);
  if (e != Error::Ok) return e;
  e = check_storage(method.name_, m, diag);
  if (e != Error::Ok) return e;
  if (m->inputs()) method.inputs_ = {m->inputs()->data(), m->inputs()->size()};
  if (m->outputs()) method.outputs_ = {m->outputs()->data(), m->outputs()->size()};
  e = method.load_steps(m, memory, diag);
  if (e != Error::Ok) return e;
  *out = method;
  return Error::Ok;
}

static bool spec_of(const fb::Method* m, uint32_t value, TensorSpec* out) {
  const fb::Tensor* t = m->values()->Get(value)->kind_as_Tensor();
  if (t == nullptr) return false;
  out->dtype = static_cast<ScalarType>(t->dtype());
  out->dim = static_cast<int32_t>(t->sizes() ? t->sizes()->size() : 0);
  bool has_min = t->min_sizes() && t->min_sizes()->size() == static_cast<uint32_t>(out->dim);
  for (int d = 0; d < out->dim; ++d) {
    out->max_sizes[d] = t->sizes()->Get(d);
    out->min_sizes[d] = has_min ? t->min_sizes()->Get(d) : out->max_sizes[d];
  }
  return true;
}

bool Method::input_spec(size_t i, TensorSpec* out) const {
  return i < inputs_.size && spec_of(fb_method(fb_), inputs_[i], out);
}

bool Method::output_spec(size_t i, TensorSpec* out) const {
  return i < outputs_.size && spec_of(fb_method(fb_), outputs_[i], out);
}

const char* Method::metadata(const char* key) const {
  auto* md = fb_method(fb_)->metadata();
  if (md == nullptr || key == nullptr) return nullptr;
  for (const fb::KeyValue* kv : *md)
    if (kv->key() && strcmp(kv->key()->c_str(), key) == 0) return kv->value() ? kv->value()->c_str() : "";
  return nullptr;
}

size_t Method::arena_size(size_t i) const { return i < arena_sizes_.size ? arena_sizes_[i] : 0; }

}  // namespace pocket
