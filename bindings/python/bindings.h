// What the sources of the pybind11 module pocket._native share: native.cpp defines the module
// and PocketError raising; llm_bindings.cpp and runner_bindings.cpp add their classes to it.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "pocket/error.h"

namespace pocket {
class Tokenizer;
}

// Raises pocket.PocketError(code, status, message) (pocket/_errors.py); invalid UTF-8 in
// `message` is replaced. Defined in native.cpp.
[[noreturn]] void raise_pocket_error(pocket::Error e, const std::string& message);

void bind_llm(pybind11::module_& m);     // llm_bindings.cpp: Tokenizer
void bind_runner(pybind11::module_& m);  // runner_bindings.cpp: Runner, GenerationConfig, ...

// A pocket._native.Tokenizer over `tokenizer`, read-only (a runner's). Defined in llm_bindings.cpp.
pybind11::object tokenizer_view(std::shared_ptr<const pocket::Tokenizer> tokenizer);
