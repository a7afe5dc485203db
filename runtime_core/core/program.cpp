// Program loading: header checks, flatbuffers verification, and the semantic checks on
// program-level tables (segments, buffers, metadata). Method-level checks: method_load.cpp.
#include "pocket/program.h"

#include <cstring>

#include "program_generated.h"

namespace pocket {

static_assert(FLATBUFFERS_LITTLEENDIAN, "Pocket files are little-endian");

// ScalarType (tensor.h) is the file format's enum (program.fbs), number for number; pocket.h's
// pk_dtype is tied to ScalarType in c_api.cpp.
constexpr bool same_dtype(ScalarType t, fb::ScalarType f) { return static_cast<int>(t) == static_cast<int>(f); }
static_assert(same_dtype(ScalarType::Float32, fb::ScalarType::Float32) &&
                  same_dtype(ScalarType::Float16, fb::ScalarType::Float16) &&
                  same_dtype(ScalarType::BFloat16, fb::ScalarType::BFloat16) &&
                  same_dtype(ScalarType::Float64, fb::ScalarType::Float64) &&
                  same_dtype(ScalarType::Int8, fb::ScalarType::Int8) &&
                  same_dtype(ScalarType::UInt8, fb::ScalarType::UInt8) &&
                  same_dtype(ScalarType::Int16, fb::ScalarType::Int16) &&
                  same_dtype(ScalarType::Int32, fb::ScalarType::Int32) &&
                  same_dtype(ScalarType::Int64, fb::ScalarType::Int64) &&
                  same_dtype(ScalarType::Bool, fb::ScalarType::Bool),
              "tensor.h's ScalarType differs from program.fbs");
static_assert(kNumScalarTypes == static_cast<int>(fb::ScalarType::MAX) + 1 &&
                  static_cast<int>(fb::ScalarType::MIN) == 0,
              "program.fbs and tensor.h have different numbers of dtypes");

namespace {

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

const fb::Program* fb_program(const void* root) { return static_cast<const fb::Program*>(root); }

Error check_header(const uint8_t* data, uint64_t size, uint32_t* version, uint64_t* fb_size,
                   uint64_t* segment_base, Diag& diag) {
  if (data == nullptr) return diag.fail(Error::InvalidArgument, "program data is NULL");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0)
    return diag.fail(Error::InvalidArgument, "program data must be %zu-byte aligned",
                     kDataAlignment);
  if (size < kHeaderSize)
    return diag.fail(Error::InvalidProgram,
                     "file is truncated: %llu bytes is smaller than the %u-byte header",
                     static_cast<unsigned long long>(size), kHeaderSize);
  if (memcmp(data, kMagic, sizeof kMagic) != 0)
    return diag.fail(Error::InvalidProgram, "not a .pocket file: wrong magic (expected \"POCKETPG\")");
  *version = read_u32(data + 8);
  if (*version < kMinFormatVersion || *version > kMaxFormatVersion)
    return diag.fail(Error::Unsupported,
                     "format version %u is not supported (this runtime reads %u to %u)", *version,
                     kMinFormatVersion, kMaxFormatVersion);
  if (read_u32(data + 12) != kHeaderSize)
    return diag.fail(Error::InvalidProgram, "header size %u, expected %u", read_u32(data + 12),
                     kHeaderSize);
  *fb_size = read_u64(data + 16);
  *segment_base = read_u64(data + 24);
  if (*fb_size > size - kHeaderSize)
    return diag.fail(Error::InvalidProgram,
                     "file is truncated: flatbuffer of %llu bytes does not fit in %llu bytes",
                     static_cast<unsigned long long>(*fb_size), static_cast<unsigned long long>(size));
  if (*segment_base < kHeaderSize + *fb_size || *segment_base % 64 != 0 || *segment_base > size)
    return diag.fail(Error::InvalidProgram, "segment base offset %llu is invalid (file has %llu bytes)",
                     static_cast<unsigned long long>(*segment_base),
                     static_cast<unsigned long long>(size));
  return Error::Ok;
}

// A buffer's byte size must be what its dtype and shape need: the runtime allocates (and
// zero-fills) nbytes per buffer, so an unchecked size would let a file claim any memory.
Error check_buffer_size(uint32_t i, const fb::MutableBuffer* b, Diag& diag) {
  if (!is_valid_scalar_type(static_cast<int>(b->dtype())))
    return diag.fail(Error::InvalidProgram, "buffer %u: unknown dtype %d", i, static_cast<int>(b->dtype()));
  if (b->sizes() && reinterpret_cast<uintptr_t>(b->sizes()->data()) % alignof(int64_t) != 0)
    return diag.fail(Error::InvalidProgram, "buffer %u: sizes are misaligned", i);  // not checked by the Verifier
  uint32_t dim = b->sizes() ? b->sizes()->size() : 0;
  const ShapeCheck shape = check_shape(b->sizes() ? b->sizes()->data() : nullptr, dim);
  switch (shape.problem) {
    case ShapeCheck::Problem::None: break;
    case ShapeCheck::Problem::TooManyDims:
      return diag.fail(Error::Unsupported, "buffer %u: %u dims (at most %d supported)", i, dim, kMaxDim);
    case ShapeCheck::Problem::BadSize:
      return diag.fail(Error::InvalidProgram, "buffer %u: size %lld of dim %u is invalid", i,
                       static_cast<long long>(b->sizes()->Get(shape.dim)), shape.dim);
    case ShapeCheck::Problem::TooLarge: return diag.fail(Error::InvalidProgram, "buffer %u: too many elements", i);
  }
  uint64_t need = shape.numel * element_size(static_cast<ScalarType>(b->dtype()));
  if (b->nbytes() != need)
    return diag.fail(Error::InvalidProgram, "buffer %u: %llu bytes, its dtype and shape need %llu", i,
                     static_cast<unsigned long long>(b->nbytes()), static_cast<unsigned long long>(need));
  return Error::Ok;
}

Error check_tables(const fb::Program* p, uint64_t segments_size, Diag& diag) {
  if (p->methods() == nullptr || p->methods()->size() == 0)
    return diag.fail(Error::InvalidProgram, "program has no methods");
  for (uint32_t i = 0; i < p->methods()->size(); ++i)
    if (p->methods()->Get(i)->name() == nullptr)
      return diag.fail(Error::InvalidProgram, "method %u has no name", i);
  uint32_t n_segments = p->segments() ? p->segments()->size() : 0;
  for (uint32_t i = 0; i < n_segments; ++i) {
    const fb::Segment* s = p->segments()->Get(i);
    if (s->offset() % 64 != 0 || s->offset() > segments_size ||
        s->size() > segments_size - s->offset())
      return diag.fail(Error::InvalidProgram,
                       "segment %u (offset %llu, %llu bytes) lies outside the file's %llu "
                       "segment bytes or is not 64-byte aligned",
                       i, static_cast<unsigned long long>(s->offset()),
                       static_cast<unsigned long long>(s->size()),
                       static_cast<unsigned long long>(segments_size));
  }
  uint32_t n_buffers = p->buffers() ? p->buffers()->size() : 0;
  for (uint32_t i = 0; i < n_buffers; ++i) {
    const fb::MutableBuffer* b = p->buffers()->Get(i);
    Error e = check_buffer_size(i, b, diag);
    if (e != Error::Ok) return e;
    int32_t seg = b->init_segment();
    if (seg < -1 || seg >= static_cast<int32_t>(n_segments))
      return diag.fail(Error::InvalidProgram, "buffer %u: initial-value segment %d out of range", i, seg);
    if (seg >= 0 && p->segments()->Get(seg)->size() != b->nbytes())
      return diag.fail(Error::InvalidProgram, "buffer %u: initial value has %llu bytes, buffer has %llu",
                       i, static_cast<unsigned long long>(p->segments()->Get(seg)->size()),
                       static_cast<unsigned long long>(b->nbytes()));
  }
  int32_t tok = p->tokenizer_segment();
  if (tok < -1 || tok >= static_cast<int32_t>(n_segments))
    return diag.fail(Error::InvalidProgram, "tokenizer segment %d out of range", tok);
  if (p->metadata() != nullptr)
    for (uint32_t i = 0; i < p->metadata()->size(); ++i) {
      const fb::KeyValue* kv = p->metadata()->Get(i);
      if (kv->key() == nullptr || kv->value() == nullptr)
        return diag.fail(Error::InvalidProgram, "metadata entry %u has no key or value", i);
    }
  return Error::Ok;
}

}  // namespace

Error Program::load(const uint8_t* data, uint64_t size, Program* out, Diag& diag) {
  uint32_t version = 0;
  uint64_t fb_size = 0, segment_base = 0;
  Error e = check_header(data, size, &version, &fb_size, &segment_base, diag);
  if (e != Error::Ok) return e;

  const uint8_t* fb_data = data + kHeaderSize;
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 100000000;
  flatbuffers::Verifier verifier(fb_data, static_cast<size_t>(fb_size), options);
  if (!fb::VerifyProgramBuffer(verifier))
    return diag.fail(Error::InvalidProgram, "corrupted program: the flatbuffer failed verification");
  const fb::Program* root = fb::GetProgram(fb_data);
  if (root->version() != version)
    return diag.fail(Error::InvalidProgram, "header says format version %u, program says %u",
                     version, root->version());
  e = check_tables(root, size - segment_base, diag);
  if (e != Error::Ok) return e;

  out->data_ = data;
  out->size_ = size;
  out->segment_base_ = data + segment_base;
  out->root_ = root;
  out->version_ = version;
  return Error::Ok;
}

Error Program::check_ops(Span<const KernelEntry> kernels, Diag& diag) const {
  const auto* methods = fb_program(root_)->methods();
  for (uint32_t m = 0; m < methods->size(); ++m) {
    const auto* ops = methods->Get(m)->operators();
    for (uint32_t i = 0; ops != nullptr && i < ops->size(); ++i) {
      const fb::Operator* op = ops->Get(i);
      const char* name = op->name() ? op->name()->c_str() : "";
      const char* overload = op->overload() ? op->overload()->c_str() : "";
      if (find_kernel(kernels, name, overload) == nullptr)
        return fail_unknown_op(diag, methods->Get(m)->name()->c_str(), name, overload, i);
    }
  }
  return Error::Ok;
}

size_t Program::num_methods() const { return fb_program(root_)->methods()->size(); }

const char* Program::method_name(size_t i) const {
  if (i >= num_methods()) return nullptr;
  return fb_program(root_)->methods()->Get(static_cast<uint32_t>(i))->name()->c_str();
}

int Program::find_method(const char* name) const {
  if (name == nullptr) return -1;
  for (size_t i = 0; i < num_methods(); ++i)
    if (strcmp(method_name(i), name) == 0) return static_cast<int>(i);
  return -1;
}

size_t Program::num_metadata() const {
  auto* m = fb_program(root_)->metadata();
  return m ? m->size() : 0;
}

const char* Program::metadata_key(size_t i) const {
  return i < num_metadata() ? fb_program(root_)->metadata()->Get(i)->key()->c_str() : nullptr;
}

const char* Program::metadata_value(size_t i) const {
  return i < num_metadata() ? fb_program(root_)->metadata()->Get(i)->value()->c_str() : nullptr;
}

const char* Program::metadata(const char* key) const {
  if (key == nullptr) return nullptr;
  for (size_t i = 0; i < num_metadata(); ++i)
    if (strcmp(metadata_key(i), key) == 0) return metadata_value(i);
  return nullptr;
}

size_t Program::num_segments() const {
  auto* s = fb_program(root_)->segments();
  return s ? s->size() : 0;
}

Span<const uint8_t> Program::segment(size_t i) const {
  if (i >= num_segments()) return {};
  const fb::Segment* s = fb_program(root_)->segments()->Get(static_cast<uint32_t>(i));
  return {segment_base_ + s->offset(), static_cast<size_t>(s->size())};
}

size_t Program::num_buffers() const {
  auto* b = fb_program(root_)->buffers();
  return b ? b->size() : 0;
}

const char* Program::buffer_name(size_t i) const {
  if (i >= num_buffers()) return nullptr;
  auto* name = fb_program(root_)->buffers()->Get(static_cast<uint32_t>(i))->name();
  return name ? name->c_str() : "";
}

size_t Program::buffer_nbytes(size_t i) const {
  if (i >= num_buffers()) return 0;
  return static_cast<size_t>(fb_program(root_)->buffers()->Get(static_cast<uint32_t>(i))->nbytes());
}

void Program::init_buffer(size_t i, void* dst) const {
  if (i >= num_buffers()) return;
  const fb::MutableBuffer* b = fb_program(root_)->buffers()->Get(static_cast<uint32_t>(i));
  if (b->init_segment() < 0) {
    memset(dst, 0, static_cast<size_t>(b->nbytes()));
  } else {
    Span<const uint8_t> s = segment(static_cast<size_t>(b->init_segment()));
    memcpy(dst, s.data, s.size);
  }
}

Span<const uint8_t> Program::tokenizer() const {
  int32_t t = fb_program(root_)->tokenizer_segment();
  return t < 0 ? Span<const uint8_t>() : segment(static_cast<size_t>(t));
}

}  // namespace pocket
