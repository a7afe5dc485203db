// What the sources of the pybind11 module pocket._native share: native.cpp defines the module;
// llm_bindings.cpp and runner_bindings.cpp add their classes to it; shared.h (errors, numpy
// arrays) is shared with the kernel test harness too.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "pocket/error.h"
#include "shared.h"

namespace pocket {
class Tokenizer;
}

void bind_llm(pybind11::module_& m);     // llm_bindings.cpp: Tokenizer
void bind_runner(pybind11::module_& m);  // runner_bindings.cpp: Runner, GenerationConfig, ...

// A pocket._native.Tokenizer over `tokenizer`, read-only (a runner's). Defined in llm_bindings.cpp.
pybind11::object tokenizer_view(std::shared_ptr<const pocket::Tokenizer> tokenizer);
