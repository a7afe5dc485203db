// pocket._native: the pybind11 module behind pocket.load(), the tokenizer and the LLM runner.
// Imports no torch; tensors cross as numpy arrays. (The kernel test harness is a module of
// its own, pocket._native_testing: kernel_harness.cpp.)
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "module.h"

namespace py = pybind11;
using pocket::Error;

namespace {

[[noreturn]] void raise(Error e, const std::string& message) { raise_pocket_error(e, message); }

// A contiguous array over `bytes` (moved into the array, which frees it) with t's dtype and shape.
py::array owning_array(const pocket::Tensor& t, std::unique_ptr<std::vector<uint8_t>> bytes) {
  std::vector<py::ssize_t> shape(t.sizes, t.sizes + t.dim);
  if (bytes->empty()) return py::array(numpy_dtype(t.dtype), shape);
  std::vector<uint8_t>* owned = bytes.release();
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array(numpy_dtype(t.dtype), shape, owned->data(), owner);
}

py::dict spec_dict(const pocket::TensorSpec& s) {
  py::dict d;
  d["dtype"] = pocket::scalar_type_name(s.dtype);
  d["min_shape"] = std::vector<int64_t>(s.min_sizes, s.min_sizes + s.dim);
  d["max_shape"] = std::vector<int64_t>(s.max_sizes, s.max_sizes + s.dim);
  return d;
}

class PyModule {
 public:
  static PyModule from_file(const std::string& path, bool mmap) {
    PyModule m;
    std::string message;
    Error e = pocket::Module::load_file(path, mmap ? pocket::FileData::Mode::Mmap : pocket::FileData::Mode::Read,
                                        &m.module_, &message);
    if (e != Error::Ok) raise(e, message);
    return m;
  }
  static PyModule from_fd(int fd, uint64_t offset, uint64_t length, bool mmap) {
    PyModule m;
    std::string message;
    Error e = pocket::Module::load_fd(fd, offset, length,
                                      mmap ? pocket::FileData::Mode::Mmap : pocket::FileData::Mode::Read,
                                      &m.module_, &message);
    if (e != Error::Ok) raise(e, message);
    return m;
  }
  bool mapped() const { return module_->mapped(); }
  static PyModule from_bytes(const py::bytes& data) {
    PyModule m;
    std::string message;
    std::string_view view = data;
    Error e = pocket::Module::load_buffer(view.data(), view.size(), &m.module_, &message);
    if (e != Error::Ok) raise(e, message);
    return m;
  }

  py::list method_names() const {
    py::list names;
    for (size_t i = 0; i < module_->program().num_methods(); ++i) names.append(text(module_->program().method_name(i)));
    return names;
  }

  py::dict metadata() const {
    py::dict d;
    const pocket::Program& p = module_->program();
    for (size_t i = 0; i < p.num_metadata(); ++i) d[text(p.metadata_key(i))] = text(p.metadata_value(i));
    return d;
  }

  pocket::Method* method(const std::string& name) {
    pocket::Method* m = nullptr;
    std::string message;
    Error e;
    {
      py::gil_scoped_release release;  // waits while another thread runs the module
      e = module_->method(name, &m, &message);
    }
    if (e != Error::Ok) raise(e, message);
    return m;
  }

  py::dict method_info(const std::string& name) {
    pocket::Method* m = method(name);
    py::list inputs, outputs, arenas;
    pocket::TensorSpec s;
    for (size_t i = 0; i < m->num_inputs(); ++i)
      inputs.append(m->input_spec(i, &s) ? py::object(spec_dict(s)) : py::object(py::none()));
    for (size_t i = 0; i < m->num_outputs(); ++i)
      outputs.append(m->output_spec(i, &s) ? py::object(spec_dict(s)) : py::object(py::none()));
    for (size_t i = 0; i < m->num_arenas(); ++i) arenas.append(m->arena_size(i));
    py::dict d;
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    d["arenas"] = arenas;
    for (const char* key : {"input_spec", "output_spec", "ops"}) {
      const char* v = m->metadata(key);
      d[key] = v ? py::object(text(v)) : py::object(py::none());
    }
    return d;
  }

  py::list run(const std::string& name, py::list inputs) {
    std::vector<py::array> arrays;
    std::vector<pocket::Tensor> tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
      py::array a = py::array::ensure(inputs[i], py::array::c_style);
      if (!a) raise(Error::InvalidArgument, "input " + std::to_string(i) + " is not an array");
      arrays.push_back(a);
      tensors.push_back(tensor_view(arrays.back()));
    }
    // Outputs are copied out of the arenas while the module is locked (no GIL needed), then
    // handed to numpy without another copy.
    std::vector<pocket::Value> values;
    std::vector<std::unique_ptr<std::vector<uint8_t>>> bytes;
    std::string message;
    Error e;
    {
      py::gil_scoped_release release;
      e = module_->execute(name, tensors.data(), tensors.size(), [&](const pocket::Method& m) {
        for (size_t i = 0; i < m.num_outputs(); ++i) {
          values.push_back(m.output(i));
          bytes.emplace_back();
          if (!values.back().is_tensor()) continue;
          const pocket::Tensor& t = values.back().tensor;
          const uint8_t* data = static_cast<const uint8_t*>(t.data);
          bytes.back().reset(new std::vector<uint8_t>(data, data + t.nbytes()));
        }
      }, &message);
    }
    if (e != Error::Ok) raise(e, message);
    py::list out;
    for (size_t i = 0; i < values.size(); ++i) {
      const pocket::Value& v = values[i];
      if (v.is_tensor()) out.append(owning_array(v.tensor, std::move(bytes[i])));
      else if (v.tag == pocket::Value::Tag::Int) out.append(v.i);
      else if (v.tag == pocket::Value::Tag::Double) out.append(v.d);
      else if (v.tag == pocket::Value::Tag::Bool) out.append(v.b);
      else out.append(py::none());
    }
    return out;
  }

  // These wait while another thread runs the module: without the GIL.
  void set_num_threads(int n) {
    if (n < 0) raise(Error::InvalidArgument, "num_threads must be >= 0");
    py::gil_scoped_release release;
    module_->set_num_threads(n);
  }
  void reset_buffers() {
    py::gil_scoped_release release;
    module_->reset_buffers();
  }
  int num_threads() const {
    py::gil_scoped_release release;
    return module_->num_threads();
  }
  void set_memory_limit(uint64_t bytes) {
    py::gil_scoped_release release;
    module_->set_memory_limit(bytes);
  }
  uint64_t memory_limit() const {
    py::gil_scoped_release release;
    return module_->memory_limit();
  }
  void set_profiling(bool on) {
    py::gil_scoped_release release;
    module_->set_profiling(on);
  }
  // [(op, source, layer, calls, nanoseconds)] per instruction.
  py::list profile(const std::string& name) {
    std::vector<pocket::StepProfile> entries;
    std::string message;
    Error e;
    {
      py::gil_scoped_release release;
      e = module_->profile(name, &entries, &message);
    }
    if (e != Error::Ok) raise(e, message);
    py::list out;
    for (const pocket::StepProfile& p : entries) out.append(py::make_tuple(text(p.op), text(p.source), text(p.layer), p.calls, p.nanoseconds));
    return out;
  }

 private:
  std::unique_ptr<pocket::Module> module_;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "Pocket runtime (C++), used by pocket.load(); imports no torch.";
  // The pk_status numbers by name ({"OK": 0, "INVALID_ARGUMENT": 1, ...}), read from error.h's
  // Error, for the errors Python raises itself.
  py::dict statuses;
  for (int32_t i = 0; std::strcmp(pocket::error_name(static_cast<Error>(i)), "UNKNOWN") != 0; ++i)
    statuses[pocket::error_name(static_cast<Error>(i))] = i;
  m.attr("STATUS") = statuses;
  py::class_<PyModule>(m, "Module")
      .def_static("from_file", &PyModule::from_file, py::arg("path"), py::arg("mmap") = true)
      .def_static("from_bytes", &PyModule::from_bytes, py::arg("data"))
      .def_static("from_fd", &PyModule::from_fd, py::arg("fd"), py::arg("offset"), py::arg("length"),
                  py::arg("mmap") = true)
      .def_property_readonly("mapped", &PyModule::mapped)
      .def("method_names", &PyModule::method_names)
      .def("metadata", &PyModule::metadata)
      .def("method_info", &PyModule::method_info)
      .def("run", &PyModule::run)
      .def("set_num_threads", &PyModule::set_num_threads)
      .def_property_readonly("num_threads", &PyModule::num_threads)
      .def("set_memory_limit", &PyModule::set_memory_limit, py::arg("bytes"))
      .def_property_readonly("memory_limit", &PyModule::memory_limit)
      .def("reset_buffers", &PyModule::reset_buffers)
      .def("set_profiling", &PyModule::set_profiling, py::arg("on"))
      .def("profile", &PyModule::profile, py::arg("method"));
  m.def("cpu_features", [] {
    py::dict d;
    for (const pocket::detail::FeatureInfo& info : pocket::detail::feature_list())
      d[info.name] = pocket::detail::cpu_features().*info.flag;
    return d;
  }, "CPU features the optimized kernels use, detected at run time (POCKET_KERNELS caps them: portable, avx2, ...).");
  m.def("kernel_set", [](const std::string& table) {
    return std::string(pocket::detail::kernel_set_name(features_for(table)));
  }, py::arg("table") = "best", "Name of the optimized kernel set a table uses (\"avx2\", ..., \"portable\").");
  m.def("optimized_ops", [](const std::string& table) {
    std::vector<std::string> names;
    pocket::detail::CpuFeatures f = features_for(table);
    for (const pocket::KernelEntry& k : pocket::portable_kernels())
      if (pocket::detail::kernel_for(k.name, f) != k.fn) names.emplace_back(k.name);
    return names;
  }, py::arg("table") = "best", "Ops whose kernel in `table` differs from the portable one.");
  bind_llm(m);
  bind_runner(m);
  m.def("kernel_names", [] {
    std::vector<std::pair<std::string, std::string>> names;
    for (const pocket::KernelEntry& k : pocket::portable_kernels()) names.emplace_back(k.name, k.signature);
    return names;
  });
}
