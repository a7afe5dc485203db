#include "pocket/kernel.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace pocket {

void* BumpAllocator::allocate(size_t size, size_t alignment) {
  uintptr_t base = reinterpret_cast<uintptr_t>(base_);
  uintptr_t p = (base + used_ + alignment - 1) & ~(uintptr_t(alignment) - 1);
  size_t end = static_cast<size_t>(p - base) + size;
  if (end > size_ || end < size) return nullptr;
  used_ = end;
  return reinterpret_cast<void*>(p);
}

Error KernelContext::fail(Error e, const char* fmt, ...) {
  if (diag == nullptr) return e;
  va_list args;
  va_start(args, fmt);
  diag->vfail(e, fmt, args);
  va_end(args);
  return e;
}

void* KernelContext::allocate_temp(size_t size, size_t alignment) {
  return temp == nullptr ? nullptr : temp->allocate(size, alignment);
}

namespace {
struct KeptHeader {
  size_t key_size, size;
  bool ready;
};
constexpr size_t kKeptAlign = 64;
size_t kept_offset(size_t key_size) { return (sizeof(KeptHeader) + key_size + kKeptAlign - 1) & ~(kKeptAlign - 1); }
}  // namespace

void* KernelContext::kept_block(uint64_t constant_mask, const void* key, size_t key_size, size_t size, bool* ready) {
  *ready = false;
  if (state == nullptr || persistent == nullptr || (constant_args & constant_mask) != constant_mask) return nullptr;
  auto* h = static_cast<KeptHeader*>(*state);
  if (h == nullptr) {
    const size_t offset = kept_offset(key_size);
    if (size > SIZE_MAX - offset) return nullptr;
    h = static_cast<KeptHeader*>(persistent->allocate(offset + size, kKeptAlign));
    if (h == nullptr) return nullptr;
    *h = KeptHeader{key_size, size, false};
    memcpy(h + 1, key, key_size);
    *state = h;
  } else if (h->key_size != key_size || h->size != size || memcmp(h + 1, key, key_size) != 0) {
    return nullptr;
  }
  *ready = h->ready;
  return reinterpret_cast<uint8_t*>(h) + kept_offset(key_size);
}

void KernelContext::kept_ready(const void* block) {
  if (state == nullptr || *state == nullptr || block == nullptr) return;
  auto* h = static_cast<KeptHeader*>(*state);
  if (reinterpret_cast<const uint8_t*>(h) + kept_offset(h->key_size) == block) h->ready = true;
}

// Compares "aten::add" + "." + "Tensor" with an entry name without building a string.
static int compare_name(const char* entry, const char* name, const char* overload) {
  size_t n = strlen(name);
  int c = strncmp(entry, name, n);
  if (c != 0) return c;
  const char* rest = entry + n;
  if (overload[0] == '\0') return rest[0] == '\0' ? 0 : 1;
  if (rest[0] != '.') return rest[0] < '.' ? -1 : 1;
  return strcmp(rest + 1, overload);
}

const KernelEntry* find_kernel(Span<const KernelEntry> table, const char* name,
                               const char* overload) {
  if (name == nullptr) return nullptr;
  if (overload == nullptr || strcmp(overload, "default") == 0) overload = "";
  size_t lo = 0, hi = table.size;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = compare_name(table[mid].name, name, overload);
    if (c == 0) return &table[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return nullptr;
}

Error fail_unknown_op(Diag& diag, const char* method, const char* name, const char* overload,
                      uint32_t index) {
  const bool dot = overload[0] != '\0' && strcmp(overload, "default") != 0;
  return diag.fail(Error::Unsupported, "method '%s': unknown op '%s%s%s' (operator %u): this runtime has no kernel for it",
                   method, name, dot ? "." : "", dot ? overload : "", index);
}

size_t signature_arity(const char* signature) {
  size_t n = 0;
  for (const char* p = signature; *p; ++p) n += *p != '>';
  return n;
}

bool value_matches(const Value& v, char kind) {
  using Tag = Value::Tag;
  switch (kind) {
    case 'T': return v.tag == Tag::Tensor;
    case 't': return v.tag == Tag::Tensor || v.tag == Tag::None;
    case 'i': return v.tag == Tag::Int;
    case 'j': return v.tag == Tag::Int || v.tag == Tag::None;
    case 'f': return v.tag == Tag::Double;
    case 'g': return v.tag == Tag::Double || v.tag == Tag::None;
    case 's': return v.tag == Tag::Int || v.tag == Tag::Double || v.tag == Tag::Bool;
    case 'b': return v.tag == Tag::Bool;
    case 'I': return v.tag == Tag::IntList;
    case 'J': return v.tag == Tag::IntList || v.tag == Tag::None;
    case 'F': return v.tag == Tag::DoubleList;
    case 'G': return v.tag == Tag::DoubleList || v.tag == Tag::None;
    case 'L': return v.tag == Tag::TensorList;
    case 'M': return v.tag == Tag::OptionalTensorList;
    case 'S': return v.tag == Tag::String;
    default: return false;
  }
}

}  // namespace pocket
