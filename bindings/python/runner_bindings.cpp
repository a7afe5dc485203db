// pocket._native: the LLM runner (pocket.llm.Runner wraps it).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "module.h"
#include "pocket/runner.h"
#include "pocket/tokenizer.h"

namespace py = pybind11;
using pocket::Error;

namespace {

pocket::GenerationConfig make_config(int max_new_tokens, float temperature, int top_k, float top_p, float min_p,
                                     float repetition_penalty, uint64_t seed, std::vector<std::string> stop) {
  pocket::GenerationConfig c;
  c.max_new_tokens = max_new_tokens;
  c.sampler.temperature = temperature;
  c.sampler.top_k = top_k;
  c.sampler.top_p = top_p;
  c.sampler.min_p = min_p;
  c.sampler.repetition_penalty = repetition_penalty;
  c.sampler.seed = seed;
  c.stop_strings = std::move(stop);
  return c;
}

py::dict stats_dict(const pocket::GenerationStats& s) {
  py::dict d;
  d["load_ms"] = s.load_ms;
  d["ttft_ms"] = s.ttft_ms;
  d["prefill_tok_s"] = s.prefill_tok_s;
  d["decode_tok_s"] = s.decode_tok_s;
  d["prompt_tokens"] = s.prompt_tokens;
  d["generated_tokens"] = s.generated_tokens;
  d["stop_reason"] = s.stop_reason;
  return d;
}

class PyRunner {
 public:
  PyRunner(const std::string& model, const std::string& tokenizer) {
    std::unique_ptr<pocket::Runner> r;
    std::string message;
    Error e = pocket::Runner::load(model, tokenizer, &r, &message);
    if (e != Error::Ok) raise_pocket_error(e, message);
    runner_ = std::move(r);
  }
  // The LLM program in `length` bytes of `fd` at `offset` (see Runner::load_fd).
  PyRunner(int fd, uint64_t offset, uint64_t length, const std::string& tokenizer) {
    std::unique_ptr<pocket::Runner> r;
    std::string message;
    Error e = pocket::Runner::load_fd(fd, offset, length, tokenizer, &r, &message);
    if (e != Error::Ok) raise_pocket_error(e, message);
    runner_ = std::move(r);
  }

  // The runner's own tokenizer (loaded once), for encode/decode from Python; it keeps the
  // runner alive.
  py::object tokenizer() const {
    return tokenizer_view(std::shared_ptr<const pocket::Tokenizer>(runner_, &runner_->tokenizer()));
  }

  // Starts a pulled generation of a new text; returns its id for next().
  uint64_t begin(const std::string& prompt, const pocket::GenerationConfig& config) {
    return call([&](uint64_t* id, std::string* message) { return runner_->begin(prompt, config, id, message); });
  }

  uint64_t begin_chat(const std::string& user, const pocket::GenerationConfig& config) {
    return call([&](uint64_t* id, std::string* message) { return runner_->begin_chat(user, config, id, message); });
  }

  // (text bytes, done) of generation `id`: a non-empty piece, or b"" and True at the end.
  py::tuple next(uint64_t id) {
    std::string piece;
    bool done = false;
    call([&](uint64_t*, std::string* message) { return runner_->next(id, &piece, &done, message); });
    return py::make_tuple(py::bytes(piece), done);
  }

  std::vector<int32_t> generate_ids(const std::vector<int32_t>& prompt, const pocket::GenerationConfig& config) {
    std::vector<int32_t> out;
    call([&](uint64_t*, std::string* message) { return runner_->generate_ids(prompt, config, &out, message); });
    return out;
  }

  void reset() {
    call([&](uint64_t*, std::string* message) { return runner_->reset(message); });
  }

  void set_system_prompt(const std::string& system) {
    call([&](uint64_t*, std::string* message) { return runner_->set_system_prompt(system, message); });
  }

  // Runs f(&id, &message) without the GIL (other Python threads run meanwhile) and raises
  // PocketError for a failure (BUSY when another thread is inside a call on the runner).
  template <typename F>
  uint64_t call(F&& f) {
    uint64_t id = 0;
    std::string message;
    Error e;
    {
      py::gil_scoped_release release;
      e = f(&id, &message);
    }
    if (e != Error::Ok) raise_pocket_error(e, message);
    return id;
  }

  pocket::Runner& get() { return *runner_; }

 private:
  std::shared_ptr<pocket::Runner> runner_;  // shared with tokenizer views
};

}  // namespace

void bind_runner(py::module_& m) {
  // A sampler chain on its own, for tests: draws one token from logits per call.
  py::class_<pocket::SamplerChain>(m, "Sampler")
      .def(py::init([](const pocket::GenerationConfig& c) {
             std::string bad = pocket::validate_sampler_config(c.sampler);
             if (!bad.empty()) raise_pocket_error(Error::InvalidArgument, bad);
             return pocket::make_sampler(c.sampler);
           }),
           py::arg("config"))
      .def("sample", [](pocket::SamplerChain& s, py::array_t<float, py::array::c_style | py::array::forcecast> logits) {
        if (logits.ndim() != 1 || logits.size() == 0) raise_pocket_error(Error::InvalidArgument, "logits must be a non-empty 1-d array");
        return s.sample(logits.data(), static_cast<size_t>(logits.size()));
      });
  py::class_<pocket::GenerationConfig>(m, "GenerationConfig")
      .def(py::init(&make_config), py::arg("max_new_tokens") = 256, py::arg("temperature") = 0.0f,
           py::arg("top_k") = 0, py::arg("top_p") = 1.0f, py::arg("min_p") = 0.0f,
           py::arg("repetition_penalty") = 1.0f, py::arg("seed") = 0, py::arg("stop") = std::vector<std::string>{});
  py::class_<PyRunner>(m, "Runner")
      .def(py::init<const std::string&, const std::string&>(), py::arg("model"), py::arg("tokenizer") = "")
      .def(py::init<int, uint64_t, uint64_t, const std::string&>(), py::arg("fd"), py::arg("offset"),
           py::arg("length"), py::arg("tokenizer") = "")
      .def_property_readonly("tokenizer", &PyRunner::tokenizer)
      .def("begin", &PyRunner::begin, py::arg("prompt"), py::arg("config"))
      .def("begin_chat", &PyRunner::begin_chat, py::arg("message"), py::arg("config"))
      .def("next", &PyRunner::next, py::arg("generation"))
      .def("generate_ids", &PyRunner::generate_ids, py::arg("prompt"), py::arg("config"))
      .def("format_chat", [](PyRunner& r, const std::string& user) {
        py::gil_scoped_release release;
        return r.get().format_chat_turn(user);
      })
      .def("reset", &PyRunner::reset)
      .def("set_num_threads", [](PyRunner& r, int n) {
        if (n < 0) raise_pocket_error(Error::InvalidArgument, "num_threads must be >= 0");
        py::gil_scoped_release release;
        r.get().set_num_threads(n);
      })
      .def_property_readonly("num_threads", [](PyRunner& r) {
        py::gil_scoped_release release;
        return r.get().module().num_threads();
      })
      .def("set_memory_limit", [](PyRunner& r, uint64_t bytes) {
        py::gil_scoped_release release;
        r.get().module().set_memory_limit(bytes);
      }, py::arg("bytes"))
      .def("stop", [](PyRunner& r) { r.get().stop(); })
      .def("set_system_prompt", &PyRunner::set_system_prompt)
      .def_property_readonly("system_prompt", [](PyRunner& r) {
        py::gil_scoped_release release;
        return r.get().system_prompt();
      })
      .def_property_readonly("default_system_prompt", [](PyRunner& r) { return r.get().default_system_prompt(); })
      .def_property_readonly("stats", [](PyRunner& r) { return stats_dict(r.get().stats()); })
      .def_property_readonly("position", [](PyRunner& r) { return r.get().position(); })
      .def_property_readonly("max_seq_len", [](PyRunner& r) { return r.get().max_seq_len(); })
      .def_property_readonly("vocab_size", [](PyRunner& r) { return r.get().vocab_size(); })
      .def_property_readonly("eos_ids", [](PyRunner& r) { return r.get().eos_ids(); })
      .def_property_readonly("chat_template", [](PyRunner& r) { return r.get().chat_template(); });
}
