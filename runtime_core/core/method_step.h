// A decoded instruction of a Method: written by Method::load_steps (method_load.cpp), run by
// Method::execute (method.cpp).
#pragma once

#include <cstdint>

#include "pocket/kernel.h"
#include "pocket/value.h"

namespace pocket {

enum class StepKind : uint8_t { Kernel, Move };

struct Step {
  StepKind kind;
  uint32_t a = 0;  // Move: from
  uint32_t b = 0;  // Move: to
  KernelFn fn = nullptr;
  Value** args = nullptr;
  const char* op_name = nullptr;  // "move" for a Move
  const char* source = "";        // the model source line (Method.sources), "" when unknown
  const char* layer = "";         // the model's submodule (Method.layers), "" when unknown
  uint64_t constant_args = 0;     // KernelContext::constant_args
  void* state = nullptr;          // KernelContext::state
};

}  // namespace pocket
