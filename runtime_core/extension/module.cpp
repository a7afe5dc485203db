#include "module.h"

namespace pocket {

Error Module::load_file(const std::string& path, FileData::Mode mode, std::unique_ptr<Module>* out,
                        std::string* message) {
  std::unique_ptr<FileData> data;
  Error e = FileData::open(path, mode, &data, message);
  if (e != Error::Ok) return e;
  return create(std::move(data), "'" + path + "'", out, message);
}

Error Module::load_fd(int fd, uint64_t offset, uint64_t length, FileData::Mode mode, std::unique_ptr<Module>* out,
                      std::string* message) {
  const std::string name = "fd " + std::to_string(fd) + ", offset " + std::to_string(offset) + ", length " +
                           std::to_string(length);
  std::unique_ptr<FileData> data;
  Error e = FileData::open_fd(fd, offset, length, mode, name, &data, message);
  if (e != Error::Ok) return e;
  return create(std::move(data), name, out, message);
}

Error Module::create(std::unique_ptr<FileData> data, const std::string& name, std::unique_ptr<Module>* out,
                     std::string* message) {
  std::unique_ptr<Module> m(new Module());
  Error e = m->init(std::move(data), message);
  if (e != Error::Ok) {
    *message = name + ": " + *message;
    return e;
  }
  *out = std::move(m);
  return Error::Ok;
}

Error Module::load_buffer(const void* bytes, size_t size, std::unique_ptr<Module>* out,
                          std::string* message) {
  std::unique_ptr<FileData> data;
  Error e = FileData::copy(bytes, size, &data, message);
  if (e != Error::Ok) return e;
  std::unique_ptr<Module> m(new Module());
  e = m->init(std::move(data), message);
  if (e != Error::Ok) return e;
  *out = std::move(m);
  return Error::Ok;
}

void Module::set_num_threads(int n) {
  if (n <= 0) n = default_num_threads();
  if (n == num_threads()) return;
  pool_.reset(n > 1 ? new WorkerPool(n) : nullptr);
  for (auto& m : methods_) m.second->method.set_thread_pool(pool_.get());
}

Error Module::init(std::unique_ptr<FileData> data, std::string* message) {
  Diag diag;
  Error e = Program::load(data->data(), data->size(), &program_, diag);
  if (e != Error::Ok) {
    *message = diag.message;
    return e;
  }
  data_ = std::move(data);
  size_t n = program_.num_buffers();
  buffers_.reset(new void*[n + 1]);
  for (size_t i = 0; i < n; ++i) {
    buffers_[i] = buffer_memory_.allocate(program_.buffer_nbytes(i), 64);
    if (buffers_[i] == nullptr) {
      *message = "out of memory for mutable buffer '" + std::string(program_.buffer_name(i)) + "'";
      return Error::OutOfMemory;
    }
  }
  reset_buffers();
  set_num_threads(0);
  return Error::Ok;
}

void Module::reset_buffers() {
  for (size_t i = 0; i < program_.num_buffers(); ++i) program_.init_buffer(i, buffers_[i]);
}

Error Module::method(const std::string& name, Method** out, std::string* message) {
  auto it = methods_.find(name);
  if (it != methods_.end()) {
    *out = &it->second->method;
    return Error::Ok;
  }
  std::unique_ptr<LoadedMethod> lm(new LoadedMethod());
  MethodMemory memory;
  memory.allocator = &lm->memory;
  memory.temp = &lm->temp;
  memory.buffers = {buffers_.get(), program_.num_buffers()};
  memory.kernels = best_kernels();
  memory.threads = pool_.get();
  Diag diag;
  Error e = Method::load(program_, name.c_str(), memory, &lm->method, diag);
  if (e != Error::Ok) {
    *message = diag.message;
    return e;
  }
  *out = &lm->method;
  methods_[name] = std::move(lm);
  return Error::Ok;
}

Error Module::execute(const std::string& name, const Tensor* inputs, size_t n_inputs, Method** out,
                      std::string* message) {
  Method* m = nullptr;
  Error e = method(name, &m, message);
  if (e != Error::Ok) return e;
  if (n_inputs != m->num_inputs()) {
    *message = "method '" + name + "' takes " + std::to_string(m->num_inputs()) + " inputs, got " +
               std::to_string(n_inputs);
    return Error::InvalidArgument;
  }
  for (size_t i = 0; i < n_inputs; ++i) {
    e = m->set_input(i, inputs[i]);
    if (e != Error::Ok) {
      *message = m->error_message();
      return e;
    }
  }
  e = m->execute();
  if (e != Error::Ok) {
    *message = m->error_message();
    return e;
  }
  *out = m;
  return Error::Ok;
}

}  // namespace pocket
