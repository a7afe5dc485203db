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
  std::lock_guard<std::mutex> lock(mutex_);
  if (n == (pool_ ? pool_->num_threads() : 1)) return;
  pool_.reset(n > 1 ? new WorkerPool(n) : nullptr);
  for (auto& m : methods_) m.second->method.set_thread_pool(pool_.get());
}

int Module::num_threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pool_ ? pool_->num_threads() : 1;
}

void Module::set_memory_limit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  budget_.limit = bytes;
}

uint64_t Module::memory_limit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return budget_.limit;
}

Error Module::init(std::unique_ptr<FileData> data, std::string* message) {
  Diag diag;
  Error e = Program::load(data->data(), data->size(), &program_, diag);
  if (e == Error::Ok) e = program_.check_ops(best_kernels(), diag);
  if (e != Error::Ok) {
    *message = diag.message;
    return e;
  }
  data_ = std::move(data);
  budget_.limit = physical_memory_bytes();
  set_num_threads(0);
  return Error::Ok;
}

Error Module::allocate_buffers(std::string* message) {
  if (buffers_) return Error::Ok;
  const size_t n = program_.num_buffers();
  std::unique_ptr<void*[]> buffers(new void*[n + 1]);
  for (size_t i = 0; i < n; ++i) {
    buffers[i] = buffer_memory_.allocate(program_.buffer_nbytes(i), 64);
    if (buffers[i] == nullptr) {
      buffer_memory_.reset();
      *message = "out of memory for mutable buffer '" + std::string(program_.buffer_name(i)) + "' (" +
                 std::to_string(program_.buffer_nbytes(i)) + " bytes)";
      return explain_refusal(Error::OutOfMemory, message);
    }
    program_.init_buffer(i, buffers[i]);
  }
  buffers_ = std::move(buffers);
  return Error::Ok;
}

Error Module::explain_refusal(Error e, std::string* message) {
  if (e == Error::OutOfMemory && budget_.refused != 0)
    *message += ": over the module's memory limit of " + std::to_string(budget_.limit) + " bytes (" +
                std::to_string(budget_.used) + " in use, " + std::to_string(budget_.refused) +
                " more asked for); a caller that trusts the file can raise the limit";
  budget_.refused = 0;
  return e;
}

void Module::reset_buffers() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!buffers_) return;  // allocated with their initial values on first use
  for (size_t i = 0; i < program_.num_buffers(); ++i) program_.init_buffer(i, buffers_[i]);
}

Error Module::method(const std::string& name, Method** out, std::string* message) {
  std::lock_guard<std::mutex> lock(mutex_);
  return load_method(name, out, message);
}

Error Module::load_method(const std::string& name, Method** out, std::string* message) {
  auto it = methods_.find(name);
  if (it != methods_.end()) {
    *out = &it->second->method;
    return Error::Ok;
  }
  Error e = allocate_buffers(message);
  if (e != Error::Ok) return e;
  std::unique_ptr<LoadedMethod> lm(new LoadedMethod(&budget_));
  MethodMemory memory;
  memory.allocator = &lm->memory;
  memory.temp = &lm->temp;
  memory.buffers = {buffers_.get(), program_.num_buffers()};
  memory.kernels = best_kernels();
  memory.threads = pool_.get();
  Diag diag;
  e = Method::load(program_, name.c_str(), memory, &lm->method, diag);
  if (e != Error::Ok) {
    *message = diag.message;
    return explain_refusal(e, message);
  }
  if (profiling_) start_profile(*lm);
  *out = &lm->method;
  methods_[name] = std::move(lm);
  return Error::Ok;
}

void Module::set_profiling(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  profiling_ = on;
  for (auto& entry : methods_) {
    LoadedMethod& lm = *entry.second;
    if (on) {
      start_profile(lm);
    } else {
      lm.method.set_profile(nullptr);
      std::vector<StepProfile>().swap(lm.profile);
    }
  }
}

void Module::start_profile(LoadedMethod& lm) {
  lm.profile.assign(lm.method.num_steps(), StepProfile{});
  lm.method.set_profile(lm.profile.data());
}

Error Module::profile(const std::string& name, std::vector<StepProfile>* out, std::string* message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!profiling_) {
    *message = "profiling is off: turn it on, run method '" + name + "', then read its profile";
    return Error::InvalidArgument;
  }
  Method* m = nullptr;
  Error e = load_method(name, &m, message);
  if (e != Error::Ok) return e;
  *out = methods_[name]->profile;
  return Error::Ok;
}

Error Module::execute(const std::string& name, const Tensor* inputs, size_t n_inputs, const OutputReader& read,
                      std::string* message) {
  std::lock_guard<std::mutex> lock(mutex_);
  Method* m = nullptr;
  Error e = load_method(name, &m, message);
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
    return explain_refusal(e, message);
  }
  read(*m);
  return Error::Ok;
}

}  // namespace pocket
