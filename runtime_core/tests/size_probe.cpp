// Size probe: the smallest real use of the core runtime, built to measure what the core costs
// in an app (scripts/check_native.sh strips it and checks the size against a budget).
//
//   size_probe model.pocket [method]
//
// Loads a program from a buffer, sets up its mutable buffers and loads a method in static
// memory (no heap), binds zero inputs at each input's upper-bound shape, and runs it.
// Built twice:
//  - size_probe_core: with a one-kernel table defined here (a float32 add), so the binary
//    holds the core only;
//  - size_probe_portable (POCKET_PROBE_PORTABLE): resolving ops against portable_kernels(),
//    so the difference is the portable kernel library.
#include <cstdio>
#include <cstdlib>

#include "pocket/kernel.h"
#include "pocket/method.h"
#include "pocket/program.h"

namespace {

#ifndef POCKET_PROBE_PORTABLE
// aten::add.Tensor for same-shape float32 tensors only: just enough kernel to run something.
pocket::Error probe_add(pocket::KernelContext& ctx, pocket::Value** args) {
  const pocket::Tensor& a = args[0]->tensor;
  const pocket::Tensor& b = args[1]->tensor;
  pocket::Tensor& out = args[3]->tensor;
  if (a.dtype != pocket::ScalarType::Float32 || a.numel() != b.numel())
    return ctx.fail(pocket::Error::Unsupported, "probe add: float32 tensors of one shape only");
  pocket::Error e = out.resize(a.sizes, a.dim);
  if (e != pocket::Error::Ok) return e;
  float alpha = static_cast<float>(args[2]->to_double());
  for (int64_t i = 0; i < a.numel(); ++i)
    out.data_as<float>()[i] = a.data_as<float>()[i] + alpha * b.data_as<float>()[i];
  return pocket::Error::Ok;
}

constexpr pocket::KernelEntry kProbeKernels[] = {{"aten::add.Tensor", "TTs>T", probe_add}};

pocket::Span<const pocket::KernelEntry> kernels() { return {kProbeKernels, 1}; }
#else
pocket::Span<const pocket::KernelEntry> kernels() { return pocket::portable_kernels(); }
#endif

alignas(64) uint8_t g_program[1 << 20];   // the file's bytes
alignas(64) uint8_t g_tables[1 << 20];    // method tables and arenas
alignas(64) uint8_t g_scratch[1 << 16];   // kernel scratch
alignas(64) uint8_t g_inputs[1 << 20];    // zero inputs

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.pocket [method]\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (f == nullptr) return 2;
  size_t size = fread(g_program, 1, sizeof g_program, f);
  fclose(f);

  pocket::Diag diag;
  pocket::Program program;
  if (pocket::Program::load(g_program, size, &program, diag) != pocket::Error::Ok) {
    fprintf(stderr, "%s\n", diag.message);
    return 1;
  }
  pocket::BumpAllocator tables(g_tables, sizeof g_tables);
  pocket::BumpAllocator scratch(g_scratch, sizeof g_scratch);
  // Program-level mutable buffers (e.g. a KV cache), at their initial values.
  void* buffers[16];
  if (program.num_buffers() > 16) return 1;
  for (size_t i = 0; i < program.num_buffers(); ++i) {
    buffers[i] = tables.allocate(program.buffer_nbytes(i), 64);
    if (buffers[i] == nullptr) return 1;
    program.init_buffer(i, buffers[i]);
  }
  pocket::MethodMemory memory;
  memory.buffers = {buffers, program.num_buffers()};
  memory.allocator = &tables;
  memory.temp = &scratch;
  memory.kernels = kernels();
  pocket::Method method;
  const char* name = argc > 2 ? argv[2] : program.method_name(0);
  if (pocket::Method::load(program, name, memory, &method, diag) != pocket::Error::Ok) {
    fprintf(stderr, "%s\n", diag.message);
    return 1;
  }
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    pocket::TensorSpec spec;
    if (!method.input_spec(i, &spec)) continue;
    pocket::Tensor t;
    t.dtype = spec.dtype;
    t.dim = spec.dim;
    for (int d = 0; d < spec.dim; ++d) t.sizes[d] = spec.max_sizes[d];
    t.set_contiguous_strides();
    t.data = g_inputs;
    t.capacity = sizeof g_inputs;
    if (t.nbytes() > sizeof g_inputs || method.set_input(i, t) != pocket::Error::Ok) {
      fprintf(stderr, "input %zu: %s\n", i, method.error_message());
      return 1;
    }
  }
  if (method.execute() != pocket::Error::Ok) {
    fprintf(stderr, "%s\n", method.error_message());
    return 1;
  }
  printf("%s: ran '%s' (%zu outputs)\n", argv[1], name, method.num_outputs());
  return 0;
}
