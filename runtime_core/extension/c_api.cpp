// The C API (pocket.h) over the Module facade. Every entry point catches C++ exceptions
// (allocation failures) so none crosses the C boundary; failures set a thread-local message.
#include "pocket/pocket.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "c_api_util.h"
#include "module.h"

using pocket::Error;

// pocket.h's numbers are the runtime's: pk_status is Error (error.h), pk_dtype is ScalarType
// (tensor.h, itself tied to program.fbs in program.cpp), PK_MAX_DIMS is kMaxDim.
static_assert(PK_STATUS_OK == static_cast<int>(Error::Ok) &&
                  PK_STATUS_INVALID_ARGUMENT == static_cast<int>(Error::InvalidArgument) &&
                  PK_STATUS_INVALID_PROGRAM == static_cast<int>(Error::InvalidProgram) &&
                  PK_STATUS_UNSUPPORTED == static_cast<int>(Error::Unsupported) &&
                  PK_STATUS_NOT_FOUND == static_cast<int>(Error::NotFound) &&
                  PK_STATUS_OUT_OF_MEMORY == static_cast<int>(Error::OutOfMemory) &&
                  PK_STATUS_IO == static_cast<int>(Error::Io) &&
                  PK_STATUS_OUT_OF_RANGE == static_cast<int>(Error::OutOfRange) &&
                  PK_STATUS_INTERNAL == static_cast<int>(Error::Internal) &&
                  PK_STATUS_CANCELLED == static_cast<int>(Error::Cancelled) &&
                  PK_STATUS_BUSY == static_cast<int>(Error::Busy),
              "pocket.h's pk_status differs from error.h's Error");
static_assert(PK_DTYPE_FLOAT32 == static_cast<int>(pocket::ScalarType::Float32) &&
                  PK_DTYPE_FLOAT16 == static_cast<int>(pocket::ScalarType::Float16) &&
                  PK_DTYPE_BFLOAT16 == static_cast<int>(pocket::ScalarType::BFloat16) &&
                  PK_DTYPE_FLOAT64 == static_cast<int>(pocket::ScalarType::Float64) &&
                  PK_DTYPE_INT8 == static_cast<int>(pocket::ScalarType::Int8) &&
                  PK_DTYPE_UINT8 == static_cast<int>(pocket::ScalarType::UInt8) &&
                  PK_DTYPE_INT16 == static_cast<int>(pocket::ScalarType::Int16) &&
                  PK_DTYPE_INT32 == static_cast<int>(pocket::ScalarType::Int32) &&
                  PK_DTYPE_INT64 == static_cast<int>(pocket::ScalarType::Int64) &&
                  PK_DTYPE_BOOL == static_cast<int>(pocket::ScalarType::Bool) &&
                  PK_DTYPE_BOOL + 1 == pocket::kNumScalarTypes,
              "pocket.h's pk_dtype differs from tensor.h's ScalarType");
static_assert(PK_MAX_DIMS == pocket::kMaxDim, "pocket.h's PK_MAX_DIMS differs from tensor.h's kMaxDim");

struct pk_tensor {
  pocket::Tensor t;
  std::vector<uint8_t> owned;  // empty for borrowed tensors
};

struct pk_module {
  std::unique_ptr<pocket::Module> module;
  std::vector<std::string> method_names;
};

namespace {

thread_local std::string g_last_error;

using pocket::detail::c_fail;

pk_status fail(Error e, std::string message) { return c_fail(e, std::move(message)); }
pk_status ok() { return pocket::detail::c_ok(); }

template <typename F>
pk_status guarded(F&& f) {
  return pocket::detail::c_guarded(std::forward<F>(f));
}

pk_status check_shape(pk_dtype dtype, const int64_t* shape, size_t ndim, size_t* nbytes) {
  if (!pocket::is_valid_scalar_type(dtype)) return fail(Error::InvalidArgument, "unknown dtype " + std::to_string(dtype));
  if (ndim > 0 && ndim <= static_cast<size_t>(pocket::kMaxDim) && shape == nullptr)
    return fail(Error::InvalidArgument, "shape is NULL");
  const pocket::ShapeCheck c = pocket::check_shape(shape, ndim);
  switch (c.problem) {
    case pocket::ShapeCheck::Problem::None: break;
    case pocket::ShapeCheck::Problem::TooManyDims:
      return fail(Error::InvalidArgument, "tensor has " + std::to_string(ndim) + " dims; at most " +
                                              std::to_string(PK_MAX_DIMS) + " are supported");
    case pocket::ShapeCheck::Problem::BadSize:
      if (shape[c.dim] < 0)
        return fail(Error::InvalidArgument, "shape has a negative size at dim " + std::to_string(c.dim));
      return fail(Error::InvalidArgument, "tensor is too large");
    case pocket::ShapeCheck::Problem::TooLarge: return fail(Error::InvalidArgument, "tensor is too large");
  }
  *nbytes = static_cast<size_t>(c.numel) * pocket::element_size(static_cast<pocket::ScalarType>(dtype));
  return PK_STATUS_OK;
}

pk_status make_tensor(pk_dtype dtype, const int64_t* shape, size_t ndim, pk_tensor** out,
                      pk_tensor** result) {
  if (out == nullptr) return fail(Error::InvalidArgument, "out is NULL");
  size_t nbytes = 0;
  pk_status s = check_shape(dtype, shape, ndim, &nbytes);
  if (s != PK_STATUS_OK) return s;
  pk_tensor* t = new pk_tensor();
  t->t.dtype = static_cast<pocket::ScalarType>(dtype);
  t->t.dim = static_cast<int32_t>(ndim);
  for (size_t d = 0; d < ndim; ++d) t->t.sizes[d] = shape[d];
  t->t.set_contiguous_strides();
  t->t.capacity = nbytes;
  *result = t;
  return PK_STATUS_OK;
}

pk_status get_method(pk_module* module, const char* name, pocket::Method** m) {
  if (module == nullptr) return fail(Error::InvalidArgument, "module is NULL");
  if (name == nullptr) return fail(Error::InvalidArgument, "method name is NULL");
  std::string message;
  Error e = module->module->method(name, m, &message);
  return e == Error::Ok ? PK_STATUS_OK : fail(e, message);
}

pk_status io_info(pk_module* module, const char* method, size_t i, bool input, pk_dtype* dtype,
                  size_t* ndim, int64_t* min_shape, int64_t* max_shape, size_t capacity) {
  pocket::Method* m = nullptr;
  pk_status s = get_method(module, method, &m);
  if (s != PK_STATUS_OK) return s;
  size_t n = input ? m->num_inputs() : m->num_outputs();
  const char* what = input ? "input" : "output";
  if (i >= n)
    return fail(Error::OutOfRange, std::string(what) + " index " + std::to_string(i) + " out of range: method '" +
                                       method + "' has " + std::to_string(n));
  pocket::TensorSpec spec;
  if (!(input ? m->input_spec(i, &spec) : m->output_spec(i, &spec)))
    return fail(Error::Unsupported, std::string(what) + " " + std::to_string(i) + " is not a tensor");
  if (static_cast<size_t>(spec.dim) > capacity || (spec.dim > 0 && (min_shape == nullptr || max_shape == nullptr)))
    return fail(Error::InvalidArgument, "shape arrays hold " + std::to_string(capacity) + " dims, " +
                                            std::to_string(spec.dim) + " needed");
  for (int d = 0; d < spec.dim; ++d) {
    min_shape[d] = spec.min_sizes[d];
    max_shape[d] = spec.max_sizes[d];
  }
  if (dtype) *dtype = static_cast<pk_dtype>(spec.dtype);
  if (ndim) *ndim = static_cast<size_t>(spec.dim);
  return ok();
}

}  // namespace

namespace pocket {
namespace detail {

pk_status c_fail(Error e, std::string message) {
  g_last_error = std::move(message);
  return static_cast<pk_status>(e);
}

pk_status c_ok() {
  g_last_error.clear();
  return PK_STATUS_OK;
}

}  // namespace detail
}  // namespace pocket

extern "C" {

const char* pk_status_string(pk_status status) {
  if (status < 0 || status > PK_STATUS_BUSY) return "UNKNOWN";
  return pocket::error_name(static_cast<Error>(status));
}

const char* pk_last_error(void) { return g_last_error.c_str(); }

int pk_api_version(void) { return PK_API_VERSION; }

pk_status pk_tensor_create(pk_dtype dtype, const int64_t* shape, size_t ndim, pk_tensor** out) {
  return guarded([&] {
    pk_tensor* t = nullptr;
    pk_status s = make_tensor(dtype, shape, ndim, out, &t);
    if (s != PK_STATUS_OK) return s;
    std::unique_ptr<pk_tensor> holder(t);
    t->owned.assign(t->t.capacity, 0);
    t->t.data = t->owned.data();
    *out = holder.release();
    return ok();
  });
}

pk_status pk_tensor_create_borrowed(pk_dtype dtype, const int64_t* shape, size_t ndim, void* data,
                                    size_t nbytes, pk_tensor** out) {
  return guarded([&] {
    pk_tensor* t = nullptr;
    pk_status s = make_tensor(dtype, shape, ndim, out, &t);
    if (s != PK_STATUS_OK) return s;
    std::unique_ptr<pk_tensor> holder(t);
    if (nbytes < t->t.capacity)
      return fail(Error::InvalidArgument, "borrowed data has " + std::to_string(nbytes) + " bytes, shape needs " +
                                              std::to_string(t->t.capacity));
    if (data == nullptr && t->t.capacity != 0) return fail(Error::InvalidArgument, "data is NULL");
    t->t.data = data;
    *out = holder.release();
    return ok();
  });
}

void pk_tensor_destroy(pk_tensor* tensor) { delete tensor; }

pk_dtype pk_tensor_dtype(const pk_tensor* t) { return t ? static_cast<pk_dtype>(t->t.dtype) : PK_DTYPE_FLOAT32; }
size_t pk_tensor_ndim(const pk_tensor* t) { return t ? static_cast<size_t>(t->t.dim) : 0; }
const int64_t* pk_tensor_shape(const pk_tensor* t) { return t ? t->t.sizes : nullptr; }
size_t pk_tensor_numel(const pk_tensor* t) { return t ? static_cast<size_t>(t->t.numel()) : 0; }
size_t pk_tensor_nbytes(const pk_tensor* t) { return t ? t->t.nbytes() : 0; }
void* pk_tensor_data(pk_tensor* t) { return t ? t->t.data : nullptr; }

size_t pk_dtype_size(pk_dtype dtype) {
  return pocket::is_valid_scalar_type(dtype) ? pocket::element_size(static_cast<pocket::ScalarType>(dtype)) : 0;
}

const char* pk_dtype_name(pk_dtype dtype) {
  return pocket::is_valid_scalar_type(dtype) ? pocket::scalar_type_name(static_cast<pocket::ScalarType>(dtype)) : "unknown";
}

pk_status pk_module_load_file(const char* path, pk_load_mode mode, pk_module** out) {
  return guarded([&] {
    if (path == nullptr || out == nullptr) return fail(Error::InvalidArgument, "path and out must not be NULL");
    auto m = std::make_unique<pk_module>();
    std::string message;
    Error e = pocket::Module::load_file(
        path, mode == PK_LOAD_READ ? pocket::FileData::Mode::Read : pocket::FileData::Mode::Mmap, &m->module,
        &message);
    if (e != Error::Ok) return fail(e, message);
    for (size_t i = 0; i < m->module->program().num_methods(); ++i)
      m->method_names.push_back(m->module->program().method_name(i));
    *out = m.release();
    return ok();
  });
}

pk_status pk_module_load_buffer(const void* data, size_t size, pk_module** out) {
  return guarded([&] {
    if (out == nullptr) return fail(Error::InvalidArgument, "out is NULL");
    auto m = std::make_unique<pk_module>();
    std::string message;
    Error e = pocket::Module::load_buffer(data, size, &m->module, &message);
    if (e != Error::Ok) return fail(e, message);
    for (size_t i = 0; i < m->module->program().num_methods(); ++i)
      m->method_names.push_back(m->module->program().method_name(i));
    *out = m.release();
    return ok();
  });
}

void pk_module_destroy(pk_module* module) { delete module; }

pk_status pk_module_set_num_threads(pk_module* module, int num_threads) {
  if (module == nullptr) return fail(Error::InvalidArgument, "module is NULL");
  if (num_threads < 0) return fail(Error::InvalidArgument, "num_threads must be >= 0");
  module->module->set_num_threads(num_threads);
  return ok();
}

pk_status pk_module_set_memory_limit(pk_module* module, uint64_t bytes) {
  if (module == nullptr) return fail(Error::InvalidArgument, "module is NULL");
  module->module->set_memory_limit(bytes);
  return ok();
}

uint64_t pk_module_memory_limit(const pk_module* module) { return module ? module->module->memory_limit() : 0; }

size_t pk_module_method_count(const pk_module* module) { return module ? module->method_names.size() : 0; }

const char* pk_module_method_name(const pk_module* module, size_t i) {
  return module && i < module->method_names.size() ? module->method_names[i].c_str() : nullptr;
}

size_t pk_module_metadata_count(const pk_module* module) {
  return module ? module->module->program().num_metadata() : 0;
}

pk_status pk_module_metadata_entry(const pk_module* module, size_t i, const char** key, const char** value) {
  if (module == nullptr || key == nullptr || value == nullptr)
    return fail(Error::InvalidArgument, "module, key and value must not be NULL");
  const pocket::Program& p = module->module->program();
  if (i >= p.num_metadata())
    return fail(Error::OutOfRange, "metadata index " + std::to_string(i) + " out of range (" +
                                       std::to_string(p.num_metadata()) + " entries)");
  *key = p.metadata_key(i);
  *value = p.metadata_value(i);
  return ok();
}

pk_status pk_module_metadata_get(const pk_module* module, const char* key, const char** value) {
  return guarded([&] {
    if (module == nullptr || key == nullptr || value == nullptr)
      return fail(Error::InvalidArgument, "module, key and value must not be NULL");
    const char* v = module->module->program().metadata(key);
    if (v == nullptr) return fail(Error::NotFound, std::string("no metadata key '") + key + "'");
    *value = v;
    return ok();
  });
}

pk_status pk_module_input_count(pk_module* module, const char* method, size_t* out) {
  return guarded([&] {
    pocket::Method* m = nullptr;
    if (out == nullptr) return fail(Error::InvalidArgument, "out is NULL");
    pk_status s = get_method(module, method, &m);
    if (s != PK_STATUS_OK) return s;
    *out = m->num_inputs();
    return ok();
  });
}

pk_status pk_module_output_count(pk_module* module, const char* method, size_t* out) {
  return guarded([&] {
    pocket::Method* m = nullptr;
    if (out == nullptr) return fail(Error::InvalidArgument, "out is NULL");
    pk_status s = get_method(module, method, &m);
    if (s != PK_STATUS_OK) return s;
    *out = m->num_outputs();
    return ok();
  });
}

pk_status pk_module_input_info(pk_module* module, const char* method, size_t i, pk_dtype* dtype, size_t* ndim,
                               int64_t* min_shape, int64_t* max_shape, size_t capacity) {
  return guarded([&] { return io_info(module, method, i, true, dtype, ndim, min_shape, max_shape, capacity); });
}

pk_status pk_module_output_info(pk_module* module, const char* method, size_t i, pk_dtype* dtype, size_t* ndim,
                                int64_t* min_shape, int64_t* max_shape, size_t capacity) {
  return guarded([&] { return io_info(module, method, i, false, dtype, ndim, min_shape, max_shape, capacity); });
}

pk_status pk_module_execute(pk_module* module, const char* method, pk_tensor* const* inputs, size_t n_inputs,
                            pk_tensor** outputs, size_t n_outputs) {
  return guarded([&] {
    pocket::Method* m = nullptr;
    pk_status s = get_method(module, method, &m);
    if (s != PK_STATUS_OK) return s;
    if (n_inputs > 0 && inputs == nullptr) return fail(Error::InvalidArgument, "inputs is NULL");
    if (n_outputs != m->num_outputs())
      return fail(Error::InvalidArgument, std::string("method '") + method + "' has " +
                                              std::to_string(m->num_outputs()) + " outputs, " +
                                              std::to_string(n_outputs) + " output slots given");
    if (n_outputs > 0 && outputs == nullptr) return fail(Error::InvalidArgument, "outputs is NULL");
    std::vector<pocket::Tensor> in(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) {
      if (inputs[i] == nullptr) return fail(Error::InvalidArgument, "input " + std::to_string(i) + " is NULL");
      in[i] = inputs[i]->t;
    }
    // The outputs live in the method's arenas: copy them before another call may run.
    std::vector<std::unique_ptr<pk_tensor>> results(n_outputs);
    std::string message;
    Error e = module->module->execute(method, in.data(), n_inputs, [&](const pocket::Method& done) {
      for (size_t i = 0; i < n_outputs; ++i) {
        const pocket::Value& v = done.output(i);
        if (!v.is_tensor()) return;
        results[i].reset(new pk_tensor());
        pocket::Tensor& t = results[i]->t;
        t = v.tensor;
        t.set_contiguous_strides();
        const uint8_t* bytes = static_cast<const uint8_t*>(v.tensor.data);
        results[i]->owned.assign(bytes, bytes + v.tensor.nbytes());
        t.data = results[i]->owned.data();
        t.capacity = results[i]->owned.size();
      }
    }, &message);
    if (e != Error::Ok) return fail(e, message);
    for (size_t i = 0; i < n_outputs; ++i)
      if (!results[i]) return fail(Error::Unsupported, "output " + std::to_string(i) + " is not a tensor");
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = results[i].release();
    return ok();
  });
}

// ---------------------------------------------------------------- modules in a file region

pk_status pk_module_load_fd(int fd, uint64_t offset, uint64_t length, pk_load_mode mode, pk_module** out) {
  return guarded([&] {
    if (out == nullptr) return fail(Error::InvalidArgument, "out is NULL");
    auto m = std::make_unique<pk_module>();
    std::string message;
    Error e = pocket::Module::load_fd(
        fd, offset, length, mode == PK_LOAD_READ ? pocket::FileData::Mode::Read : pocket::FileData::Mode::Mmap,
        &m->module, &message);
    if (e != Error::Ok) return fail(e, message);
    for (size_t i = 0; i < m->module->program().num_methods(); ++i)
      m->method_names.push_back(m->module->program().method_name(i));
    *out = m.release();
    return ok();
  });
}

int pk_module_is_mapped(const pk_module* module) { return module && module->module->mapped() ? 1 : 0; }

pk_status pk_module_set_profiling(pk_module* module, int enabled) {
  if (module == nullptr) return fail(Error::InvalidArgument, "module is NULL");
  return guarded([&] {
    module->module->set_profiling(enabled != 0);
    return ok();
  });
}

pk_status pk_module_profile(pk_module* module, const char* method, pk_profile_entry* entries, size_t capacity,
                            size_t* count) {
  return guarded([&] {
    if (module == nullptr) return fail(Error::InvalidArgument, "module is NULL");
    if (method == nullptr) return fail(Error::InvalidArgument, "method name is NULL");
    if (count == nullptr) return fail(Error::InvalidArgument, "count is NULL");
    if (capacity > 0 && entries == nullptr) return fail(Error::InvalidArgument, "entries is NULL");
    std::vector<pocket::StepProfile> profile;
    std::string message;
    Error e = module->module->profile(method, &profile, &message);
    if (e != Error::Ok) return fail(e, message);
    *count = profile.size();
    for (size_t i = 0; i < profile.size() && i < capacity; ++i)
      entries[i] = pk_profile_entry{profile[i].op, profile[i].source, profile[i].layer, profile[i].calls,
                                    profile[i].nanoseconds};
    return ok();
  });
}

}  // extern "C"
