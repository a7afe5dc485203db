// pocket._native: LLM pieces (tokenizers, sampler, runner).
//
//   tok = pocket._native.Tokenizer.from_file("tokenizer.json")
//   ids = tok.encode("Hello <|im_end|>", add_bos=False, parse_special=True)
//   tok.decode(ids)           # str (invalid UTF-8 replaced)
//   tok.decode_bytes(ids)     # bytes
//   tok.piece(ids[0])         # bytes of one token
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "pocket/tokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace py = pybind11;
using pocket::Error;

namespace {

[[noreturn]] void raise(Error e, const std::string& message) { raise_pocket_error(e, message); }

// str -> its UTF-8; bytes -> as they are (may be invalid UTF-8).
std::string text_arg(const py::object& text) {
  if (py::isinstance<py::bytes>(text)) return text.cast<std::string>();
  if (py::isinstance<py::str>(text)) return text.cast<std::string>();
  throw py::type_error("text must be str or bytes");
}

py::str replace_decode(const std::string& bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::object id_or_none(int32_t id) { return id < 0 ? py::object(py::none()) : py::object(py::int_(id)); }

class PyTokenizer {
 public:
  static PyTokenizer from_file(const std::string& path) {
    std::unique_ptr<pocket::Tokenizer> tok;
    std::string message;
    Error e = pocket::Tokenizer::load(path, &tok, &message);
    if (e != Error::Ok) raise(e, message);
    return PyTokenizer(std::move(tok));
  }

  static PyTokenizer from_bytes(const py::bytes& data) {
    std::unique_ptr<pocket::Tokenizer> tok;
    std::string message;
    Error e = pocket::Tokenizer::load_bytes(std::string(data), &tok, &message);
    if (e != Error::Ok) raise(e, message);
    return PyTokenizer(std::move(tok));
  }

  // A read-only view of a tokenizer someone else owns (a runner's).
  static PyTokenizer view(std::shared_ptr<const pocket::Tokenizer> tok) {
    PyTokenizer t;
    t.tok_ = std::move(tok);
    return t;
  }

  std::vector<int32_t> encode(const py::object& text, bool add_bos, bool parse_special) const {
    pocket::EncodeOptions options;
    options.add_bos = add_bos;
    options.parse_special = parse_special;
    std::vector<int32_t> ids;
    std::string message;
    Error e = tok_->encode(text_arg(text), options, &ids, &message);
    if (e != Error::Ok) raise(e, message);
    return ids;
  }

  std::string decode_to_bytes(const std::vector<int32_t>& ids, bool skip_special) const {
    pocket::DecodeOptions options;
    options.skip_special = skip_special;
    std::string out, message;
    Error e = tok_->decode(ids.data(), ids.size(), options, &out, &message);
    if (e != Error::Ok) raise(e, message);
    return out;
  }

  py::str decode(const std::vector<int32_t>& ids, bool skip_special) const {
    return replace_decode(decode_to_bytes(ids, skip_special));
  }
  py::bytes decode_bytes(const std::vector<int32_t>& ids, bool skip_special) const {
    return py::bytes(decode_to_bytes(ids, skip_special));
  }

  py::bytes piece(int32_t id) const {
    check_id(id);
    return py::bytes(tok_->piece(id));
  }
  py::str token_text(int32_t id) const {
    check_id(id);
    return replace_decode(tok_->token_text(id));
  }
  py::object token_id(const std::string& token) const { return id_or_none(tok_->token_id(token)); }

  void set_bos_id(py::object id) {
    std::string message;
    Error e = mutable_tok()->set_bos_id(id.is_none() ? -1 : id.cast<int32_t>(), &message);
    if (e != Error::Ok) raise(e, message);
  }
  void set_eos_ids(const std::vector<int32_t>& ids) {
    std::string message;
    Error e = mutable_tok()->set_eos_ids(ids, &message);
    if (e != Error::Ok) raise(e, message);
  }

  const pocket::Tokenizer& get() const { return *tok_; }

 private:
  void check_id(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tok_->vocab_size())
      raise(Error::OutOfRange, "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                   std::to_string(tok_->vocab_size()) + ")");
  }
  PyTokenizer() = default;
  explicit PyTokenizer(std::unique_ptr<pocket::Tokenizer> tok) : owned_(tok.get()), tok_(std::move(tok)) {}

  pocket::Tokenizer* mutable_tok() const {
    if (owned_ == nullptr)
      raise(Error::InvalidArgument, "this is a runner's tokenizer, which cannot be changed (the runner reads it "
                                    "from any thread); load a Tokenizer of its own to change bos/eos");
    return owned_;
  }

  pocket::Tokenizer* owned_ = nullptr;  // set when this object owns tok_ (may change it)
  std::shared_ptr<const pocket::Tokenizer> tok_;
};

// Test hooks for the pieces under the tokenizers (pre-tokenizer regex, NFC).
py::list regex_split(const std::string& pattern, const py::object& text) {
  pocket::detail::Regex re;
  std::string error;
  if (!re.compile(pattern, &error))
    raise(Error::InvalidArgument, "pattern '" + pocket::detail::pattern_for_message(pattern) + "': " + error);
  std::string s = text_arg(text);
  std::vector<std::pair<size_t, size_t>> matches;
  re.find_all(s, &matches);
  py::list out;
  for (const auto& m : matches) out.append(py::bytes(s.substr(m.first, m.second - m.first)));
  return out;
}

void bind_tokenizer(py::module_& m) {
  py::class_<PyTokenizer>(m, "Tokenizer")
      .def_static("from_file", &PyTokenizer::from_file, py::arg("path"),
                  "Loads tokenizer.json, a tiktoken file or a llama2.c tokenizer.bin (detected by content).")
      .def_static("from_bytes", &PyTokenizer::from_bytes, py::arg("data"))
      .def("encode", &PyTokenizer::encode, py::arg("text"), py::arg("add_bos") = false,
           py::arg("parse_special") = true)
      .def("decode", &PyTokenizer::decode, py::arg("ids"), py::arg("skip_special") = false)
      .def("decode_bytes", &PyTokenizer::decode_bytes, py::arg("ids"), py::arg("skip_special") = false)
      .def("piece", &PyTokenizer::piece, py::arg("id"))
      .def("token_text", &PyTokenizer::token_text, py::arg("id"))
      .def("token_id", &PyTokenizer::token_id, py::arg("token"))
      .def("is_special", [](const PyTokenizer& t, int32_t id) { return t.get().is_special(id); })
      .def("is_eos", [](const PyTokenizer& t, int32_t id) { return t.get().is_eos(id); })
      .def("set_bos_id", &PyTokenizer::set_bos_id, py::arg("id"))
      .def("set_eos_ids", &PyTokenizer::set_eos_ids, py::arg("ids"))
      .def_property_readonly("vocab_size", [](const PyTokenizer& t) { return t.get().vocab_size(); })
      .def_property_readonly("bos_id", [](const PyTokenizer& t) { return id_or_none(t.get().bos_id()); })
      .def_property_readonly("eos_id", [](const PyTokenizer& t) { return id_or_none(t.get().eos_id()); })
      .def_property_readonly("eos_ids", [](const PyTokenizer& t) { return t.get().eos_ids(); })
      .def_property_readonly("format", [](const PyTokenizer& t) { return std::string(t.get().format_name()); })
      .def("__len__", [](const PyTokenizer& t) { return t.get().vocab_size(); });
  m.def("_tokenizer_regex_split", &regex_split, py::arg("pattern"), py::arg("text"));
  m.def("_tokenizer_nfc", [](const std::string& s) { return py::bytes(pocket::detail::nfc(s)); });
}

}  // namespace

py::object tokenizer_view(std::shared_ptr<const pocket::Tokenizer> tokenizer) {
  return py::cast(PyTokenizer::view(std::move(tokenizer)));
}

void bind_llm(py::module_& m) { bind_tokenizer(m); }
