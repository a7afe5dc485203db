// pocket._native: LLM pieces (tokenizers, sampler, runner).
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_llm(py::module_& m) { (void)m; }
