// A decoded instruction of a Method: written by Method::load_steps (method_load.cpp), run by
// Method::execute (method.cpp).
#pragma once

#include <cstdint>

#include "pocket/kernel.h"
#include "pocket/value.h"

namespace pocket {

enum class StepKind : uint8_t { Kernel, Move, JumpFalse, Free };

struct Step {
  StepKind kind;
  uint32_t a = 0;  // Move: from; JumpFalse: cond; Free: value
  uint32_t b = 0;  // Move: to; JumpFalse: target
  KernelFn fn = nullptr;
  Value** args = nullptr;
  const char* op_name = nullptr;
};

}  // namespace pocket
