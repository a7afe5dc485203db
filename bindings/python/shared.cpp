#include "shared.h"

#include <cstring>
#include <vector>

namespace py = pybind11;
using pocket::Error;

py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
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
  // numpy has no bfloat16: its values travel as raw 16-bit words, uint16 as outputs give them
  // (Pocket has no uint16 dtype).
  if ((kind == 'u' || kind == 'V') && size == 2) return pocket::ScalarType::BFloat16;
  raise_pocket_error(Error::InvalidArgument, "unsupported numpy dtype " + std::string(py::str(dt)));
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

pocket::Tensor tensor_view(py::array& a) {
  if (a.ndim() > pocket::kMaxDim) raise_pocket_error(Error::InvalidArgument, "arrays may have at most 8 dims");
  pocket::Tensor t;
  t.dtype = dtype_of(a.dtype());
  t.dim = static_cast<int32_t>(a.ndim());
  for (int d = 0; d < t.dim; ++d) {
    t.sizes[d] = a.shape(d);
    if (a.strides(d) % static_cast<py::ssize_t>(a.itemsize()) != 0)
      raise_pocket_error(Error::InvalidArgument, "array strides must be multiples of the item size");
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

[[noreturn]] void raise_pocket_error(Error e, const std::string& message) {
  py::object cls = py::module_::import("pocket._errors").attr("PocketError");
  PyErr_SetObject(cls.ptr(), py::make_tuple(static_cast<int>(e), pocket::error_name(e), text(message)).ptr());
  throw py::error_already_set();
}

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
    if (!known) raise_pocket_error(Error::InvalidArgument, "run_kernel: unknown table or CPU feature '" + item + "'");
  }
  return f;
}
