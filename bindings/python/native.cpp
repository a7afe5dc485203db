// pocket._native: the pybind11 module behind pocket.load() and the kernel tests.
// Imports no torch; tensors cross as numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../../runtime_core/kernels/optimized/optimized.h"
#include "bindings.h"
#include "module.h"
#include "thread_pool.h"

namespace py = pybind11;
using pocket::Error;

namespace {

// Text from a file may be invalid UTF-8 (a corrupted name): decode it with replacement.
py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

// Raised to Python as pocket.PocketError(code, message) (see pocket/_errors.py).
[[noreturn]] void raise(Error e, const std::string& message) {
  py::object cls = py::module_::import("pocket._errors").attr("PocketError");
  PyErr_SetObject(cls.ptr(), py::make_tuple(static_cast<int>(e), pocket::error_name(e), text(message)).ptr());
  throw py::error_already_set();
}

pocket::ScalarType dtype_of(const py::dtype& dt) {
  char kind = dt.kind();
  size_t size = dt.itemsize();
  if (kind == 'f' && size == 4) return pocket::ScalarType::Float32;
  if (kind == 'f' && size == 8) return pocket::ScalarType::Float64;
  if (kind == 'f' && size == 2) return pocket::ScalarType::Float16;
  if (kind == 'i' && size == 8) return pocket::ScalarType::Int64;
  if (kind == 'i' && size == 4) return pocket::ScalarType::Int32;
  if (kind == 'i' && size == 2) return pocket::ScalarType::Int16;
  if (kind == 'i' && size == 1) return pocket::ScalarType::Int8;
  if (kind == 'u' && size == 1) return pocket::ScalarType::UInt8;
  if (kind == 'b') return pocket::ScalarType::Bool;
  if (kind == 'V' && size == 2) return pocket::ScalarType::BFloat16;  // raw 16-bit words
  raise(Error::InvalidArgument, "unsupported numpy dtype " + std::string(py::str(dt)));
}

py::dtype numpy_dtype(pocket::ScalarType t) {
  switch (t) {
    case pocket::ScalarType::Float32: return py::dtype("float32");
    case pocket::ScalarType::Float64: return py::dtype("float64");
    case pocket::ScalarType::Float16: return py::dtype("float16");
    case pocket::ScalarType::BFloat16: return py::dtype("uint16");
    case pocket::ScalarType::Int64: return py::dtype("int64");
    case pocket::ScalarType::Int32: return py::dtype("int32");
    case pocket::ScalarType::Int16: return py::dtype("int16");
    case pocket::ScalarType::Int8: return py::dtype("int8");
    case pocket::ScalarType::UInt8: return py::dtype("uint8");
    case pocket::ScalarType::Bool: return py::dtype("bool");
  }
  return py::dtype("float32");
}

// A Tensor viewing a numpy array, strides included (no copy).
pocket::Tensor tensor_view(py::array& a) {
  if (a.ndim() > pocket::kMaxDim) raise(Error::InvalidArgument, "arrays may have at most 8 dims");
  pocket::Tensor t;
  t.dtype = dtype_of(a.dtype());
  t.dim = static_cast<int32_t>(a.ndim());
  for (int d = 0; d < t.dim; ++d) {
    t.sizes[d] = a.shape(d);
    if (a.strides(d) % static_cast<py::ssize_t>(a.itemsize()) != 0)
      raise(Error::InvalidArgument, "array strides must be multiples of the item size");
    t.strides[d] = a.strides(d) / static_cast<py::ssize_t>(a.itemsize());
  }
  t.data = a.mutable_data();
  t.capacity = static_cast<size_t>(a.nbytes());
  return t;
}

py::array to_numpy(const pocket::Tensor& t) {
  std::vector<py::ssize_t> shape(t.sizes, t.sizes + t.dim);
  py::array out(numpy_dtype(t.dtype), shape);
  if (t.nbytes()) std::memcpy(out.mutable_data(), t.data, t.nbytes());
  return out;
}

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

 private:
  std::unique_ptr<pocket::Module> module_;
};

// ---- kernel harness: runs one registered kernel on Python values (tests only).

struct KernelArgs {
  std::deque<pocket::Value> values;  // stable addresses
  std::deque<std::vector<uint32_t>> index_lists;
  std::deque<std::vector<int32_t>> tensor_lists;
  std::deque<std::vector<double>> double_lists;
  std::deque<std::vector<uint8_t>> bool_lists;
  std::deque<std::string> strings;
  std::vector<py::array> arrays;

  pocket::Value* add(pocket::Value v) {
    values.push_back(v);
    return &values.back();
  }

  // ("floats", [...]) and ("bools", [...]) mark double and bool lists.
  static std::string tagged_list(py::handle h) {
    if (!py::isinstance<py::tuple>(h) || py::len(h) != 2) return "";
    py::object first = py::reinterpret_borrow<py::tuple>(h)[0];
    return py::isinstance<py::str>(first) ? first.cast<std::string>() : "";
  }

  pocket::Value* from_python(py::handle h) {
    pocket::Value v;
    if (h.is_none()) return add(v);
    if (py::isinstance<py::bool_>(h)) { v.tag = pocket::Value::Tag::Bool; v.b = h.cast<bool>(); return add(v); }
    if (py::isinstance<py::int_>(h)) { v.tag = pocket::Value::Tag::Int; v.i = h.cast<int64_t>(); return add(v); }
    if (py::isinstance<py::float_>(h)) { v.tag = pocket::Value::Tag::Double; v.d = h.cast<double>(); return add(v); }
    if (py::isinstance<py::str>(h)) {
      strings.push_back(h.cast<std::string>());
      v.tag = pocket::Value::Tag::String;
      v.str.data = strings.back().c_str();
      v.str.size = strings.back().size();
      return add(v);
    }
    if (py::isinstance<py::array>(h)) {
      arrays.push_back(py::reinterpret_borrow<py::array>(h));
      v.tag = pocket::Value::Tag::Tensor;
      new (&v.tensor) pocket::Tensor(tensor_view(arrays.back()));
      return add(v);
    }
    std::string tag = tagged_list(h);
    if (tag == "floats") {
      double_lists.push_back(py::reinterpret_borrow<py::tuple>(h)[1].cast<std::vector<double>>());
      v.tag = pocket::Value::Tag::DoubleList;
      v.double_list = {double_lists.back().data(), double_lists.back().size()};
      return add(v);
    }
    if (tag == "bools") {
      auto bs = py::reinterpret_borrow<py::tuple>(h)[1].cast<std::vector<bool>>();
      bool_lists.emplace_back(bs.begin(), bs.end());
      v.tag = pocket::Value::Tag::BoolList;
      v.bool_list = {bool_lists.back().data(), bool_lists.back().size()};
      return add(v);
    }
    if (py::isinstance<py::list>(h)) return list_from_python(py::reinterpret_borrow<py::list>(h));
    raise(Error::InvalidArgument, "run_kernel: unsupported argument " + std::string(py::repr(h)));
  }

  // [ints] -> IntList; [arrays] -> TensorList; [arrays or None] -> OptionalTensorList.
  pocket::Value* list_from_python(py::list items) {
    bool tensors = false, has_none = false;
    for (py::handle item : items) {
      tensors |= py::isinstance<py::array>(item);
      has_none |= item.is_none();
    }
    pocket::Value v;
    if (!tensors && !has_none) {
      std::vector<uint32_t> idx;
      for (py::handle item : items) idx.push_back(static_cast<uint32_t>(index_of(from_python(item))));
      index_lists.push_back(std::move(idx));
      v.tag = pocket::Value::Tag::IntList;
      v.int_list = {index_lists.back().data(), index_lists.back().size(), nullptr};
      return add(v);
    }
    std::vector<int32_t> idx;
    for (py::handle item : items) idx.push_back(item.is_none() ? -1 : static_cast<int32_t>(index_of(from_python(item))));
    tensor_lists.push_back(std::move(idx));
    v.tag = has_none ? pocket::Value::Tag::OptionalTensorList : pocket::Value::Tag::TensorList;
    v.tensor_list = {tensor_lists.back().data(), tensor_lists.back().size(), nullptr};
    return add(v);
  }

  size_t index_of(pocket::Value* v) {
    for (size_t i = 0; i < values.size(); ++i)
      if (&values[i] == v) return i;
    return 0;
  }
};

// Lists index into a value table; the harness's table is a deque, so copy it into a
// contiguous vector and point the lists at it.
// The CPU features a kernel table is chosen for: "portable" (none), "best" (this CPU's), or
// a comma-separated list of feature names (those this CPU lacks are dropped: running them
// would fault).
pocket::detail::CpuFeatures features_for(const std::string& table) {
  pocket::detail::CpuFeatures f;
  if (table == "portable") return f;
  const pocket::detail::CpuFeatures& have = pocket::detail::cpu_features();
  if (table == "best") return have;
  std::string rest = table;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    bool known = false;
    for (const pocket::detail::FeatureInfo& info : pocket::detail::feature_list())
      if (item == info.name) {
        f.*info.flag = have.*info.flag;
        known = true;
      }
    if (!known) raise(Error::InvalidArgument, "run_kernel: unknown table or CPU feature '" + item + "'");
  }
  return f;
}

// Runs kernel `name` (from the table `kernels`, see features_for) `repeat` times; *seconds
// gets the fastest call's time.
py::list run_kernel_timed(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                          int num_threads, int repeat, double* seconds) {
  const char* dot = std::strchr(name.c_str(), '.');
  std::string op = dot ? name.substr(0, dot - name.c_str()) : name;
  std::string overload = dot ? std::string(dot + 1) : "";
  const pocket::KernelEntry* entry = pocket::find_kernel(pocket::portable_kernels(), op.c_str(), overload.c_str());
  if (entry == nullptr) raise(Error::NotFound, "no kernel named '" + name + "'");
  pocket::KernelEntry chosen = *entry;
  chosen.fn = pocket::detail::kernel_for(entry->name, features_for(kernels));
  const pocket::KernelEntry* k = &chosen;
  KernelArgs args;
  std::vector<size_t> arg_index;
  for (py::handle h : inputs) arg_index.push_back(args.index_of(args.from_python(h)));
  size_t first_out = arg_index.size();
  for (py::handle h : outputs) arg_index.push_back(args.index_of(args.from_python(h)));
  std::vector<pocket::Value> table(args.values.begin(), args.values.end());
  for (pocket::Value& v : table) {
    if (v.tag == pocket::Value::Tag::IntList) v.int_list.values = table.data();
    if (v.tag == pocket::Value::Tag::TensorList || v.tag == pocket::Value::Tag::OptionalTensorList)
      v.tensor_list.values = table.data();
  }
  if (arg_index.size() != pocket::signature_arity(k->signature))
    raise(Error::InvalidArgument, name + " takes " + std::to_string(pocket::signature_arity(k->signature)) +
                                      " arguments (signature " + k->signature + "), got " + std::to_string(arg_index.size()));
  std::vector<pocket::Value*> ptrs;
  for (size_t a = 0, c = 0; a < arg_index.size(); ++a, ++c) {
    if (k->signature[c] == '>') ++c;
    // A Python list of tensors without None also stands for a Tensor?[] argument.
    if (k->signature[c] == 'M' && table[arg_index[a]].tag == pocket::Value::Tag::TensorList)
      table[arg_index[a]].tag = pocket::Value::Tag::OptionalTensorList;
    if (!pocket::value_matches(table[arg_index[a]], k->signature[c]))
      raise(Error::InvalidArgument, name + ": argument " + std::to_string(a) + " is " +
                                        pocket::value_tag_name(table[arg_index[a]].tag) + ", expected kind '" +
                                        k->signature[c] + "'");
    ptrs.push_back(&table[arg_index[a]]);
  }
  pocket::Diag diag;
  pocket::HeapAllocator temp;
  pocket::KernelContext ctx;
  ctx.diag = &diag;
  ctx.temp = &temp;
  std::unique_ptr<pocket::WorkerPool> pool;
  if (num_threads > 1) {
    pool.reset(new pocket::WorkerPool(num_threads));
    ctx.threads = pool.get();
  }
  Error e = Error::Ok;
  *seconds = 0;
  for (int i = 0; i < (repeat > 1 ? repeat : 1) && e == Error::Ok; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    e = k->fn(ctx, ptrs.data());
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *seconds = i == 0 || dt < *seconds ? dt : *seconds;
    temp.reset();
  }
  if (e != Error::Ok) raise(e, name + ": " + diag.message);
  py::list result;
  for (size_t a = first_out; a < arg_index.size(); ++a) {
    const pocket::Value& v = table[arg_index[a]];
    if (v.is_tensor()) {
      // The output array was the kernel's memory: return a view with the final shape.
      result.append(to_numpy(v.tensor));
    } else if (v.tag == pocket::Value::Tag::Int) {
      result.append(v.i);
    } else if (v.tag == pocket::Value::Tag::Bool) {
      result.append(v.b);
    } else if (v.tag == pocket::Value::Tag::TensorList) {
      py::list items;
      for (size_t i = 0; i < v.tensor_list.size; ++i) items.append(to_numpy(*v.tensor_list[i]));
      result.append(items);
    } else {
      result.append(py::none());
    }
  }
  return result;
}

py::list run_kernel(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                    int num_threads) {
  double seconds = 0;
  return run_kernel_timed(name, inputs, outputs, kernels, num_threads, 1, &seconds);
}

double time_kernel(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                   int num_threads, int repeat) {
  double seconds = 0;
  run_kernel_timed(name, inputs, outputs, kernels, num_threads, repeat, &seconds);
  return seconds;
}

}  // namespace

[[noreturn]] void raise_pocket_error(Error e, const std::string& message) { raise(e, message); }

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
      .def("reset_buffers", &PyModule::reset_buffers);
  m.def("run_kernel", &run_kernel, py::arg("name"), py::arg("inputs"), py::arg("outputs"),
        py::arg("table") = "portable", py::arg("num_threads") = 1,
        "Runs one kernel; outputs are preallocated arrays (their size is the capacity). table:\n"
        "\"portable\", \"best\" (what a Module on this CPU uses) or CPU feature names\n"
        "(\"avx2_fma,avx512\": the kernels a CPU with only those features would use).\n"
        "num_threads > 1 runs it on a thread pool of that size.");
  m.def("time_kernel", &time_kernel, py::arg("name"), py::arg("inputs"), py::arg("outputs"),
        py::arg("table") = "portable", py::arg("num_threads") = 1, py::arg("repeat") = 10,
        "Runs a kernel as run_kernel does, `repeat` times on one thread pool; returns the fastest\n"
        "call's time in seconds (for benchmarks).");
  m.def("cpu_features", [] {
    py::dict d;
    for (const pocket::detail::FeatureInfo& info : pocket::detail::feature_list())
      d[info.name] = pocket::detail::cpu_features().*info.flag;
    return d;
  }, "CPU features the optimized kernels use, detected at run time (POCKET_KERNELS=portable: none).");
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
