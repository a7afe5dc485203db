// Fuzz target `program`: a .pocket file from untrusted bytes, as pk_module_load would see it.
// Verifies the program, loads every method, and executes each one on inputs of its declared
// shapes (zeros), single-threaded. A clean error or a clean run is fine; a sanitizer report,
// a crash, a hang or a failure without a message is a finding.
#include <cstdint>
#include <vector>

#include "fuzz_util.h"
#include "pocket/kernel.h"
#include "pocket/method.h"
#include "pocket/program.h"

namespace {

using pocket::Error;
using pocket_fuzz::check;

// Elements per input: large declared inputs run at their smallest allowed shape, so one
// input stays a few milliseconds under ASan.
constexpr int64_t kMaxInputElements = int64_t(1) << 16;

int64_t numel(const int64_t* sizes, int dim) {
  int64_t n = 1;
  for (int d = 0; d < dim; ++d) n = sizes[d] > 0 && n > (int64_t(1) << 40) / sizes[d] ? (int64_t(1) << 40) : n * sizes[d];
  return n;
}

// Binds a zero tensor of the declared shape to every tensor input; false when one is too big.
bool bind_inputs(pocket::Method& m, std::vector<std::vector<uint8_t>>& storage) {
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    pocket::TensorSpec spec;
    if (!m.input_spec(i, &spec)) continue;  // an int or a list fixed at export
    const int64_t* sizes = numel(spec.max_sizes, spec.dim) <= kMaxInputElements ? spec.max_sizes : spec.min_sizes;
    if (numel(sizes, spec.dim) > kMaxInputElements || pocket::element_size(spec.dtype) == 0) return false;
    pocket::Tensor t;
    t.dtype = spec.dtype;
    t.dim = spec.dim;
    for (int d = 0; d < spec.dim; ++d) t.sizes[d] = sizes[d];
    t.set_contiguous_strides();
    storage.emplace_back(t.nbytes() + 1, 0);
    t.data = storage.back().data();
    t.capacity = t.nbytes();
    Error e = m.set_input(i, t);
    check(e == Error::Ok || m.error_message()[0] != '\0', "set_input failed without a message");
    if (e != Error::Ok) return false;
  }
  return true;
}

void run_method(const pocket::Program& program, const char* name, void** buffers, pocket::MemoryBudget* budget) {
  pocket::HeapAllocator memory(budget), temp(budget);
  pocket::MethodMemory mm;
  mm.allocator = &memory;
  mm.temp = &temp;
  mm.buffers = {buffers, program.num_buffers()};
  mm.kernels = pocket::best_kernels();
  pocket::Method m;
  pocket::Diag diag;
  Error e = pocket::Method::load(program, name, mm, &m, diag);
  check(e == Error::Ok || diag.message[0] != '\0', "Method::load failed without a message", name);
  if (e != Error::Ok) return;
  std::vector<std::vector<uint8_t>> inputs;
  if (!bind_inputs(m, inputs)) return;
  e = m.execute();
  check(e == Error::Ok || m.error_message()[0] != '\0', "execute failed without a message", name);
  for (size_t i = 0; e == Error::Ok && i < m.num_outputs(); ++i) {
    const pocket::Value& v = m.output(i);
    if (!v.is_tensor() || v.tensor.numel() == 0) continue;
    check(v.tensor.data != nullptr, "output without storage", name);
    volatile uint8_t first = *static_cast<const uint8_t*>(v.tensor.data);  // ASan checks the read
    volatile uint8_t last = static_cast<const uint8_t*>(v.tensor.data)[v.tensor.nbytes() - 1];
    (void)first;
    (void)last;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pocket_fuzz::AlignedCopy file(data, size);
  pocket::Program program;
  pocket::Diag diag;
  Error e = pocket::Program::load(file.bytes.get(), file.size, &program, diag);
  check(e == Error::Ok || diag.message[0] != '\0', "Program::load failed without a message");
  if (e != Error::Ok) return 0;

  pocket::MemoryBudget budget;
  budget.limit = pocket_fuzz::kMemoryLimit;
  pocket::HeapAllocator buffer_memory(&budget);
  std::vector<void*> buffers(program.num_buffers() + 1);
  for (size_t i = 0; i < program.num_buffers(); ++i) {
    buffers[i] = buffer_memory.allocate(program.buffer_nbytes(i), 64);
    if (buffers[i] == nullptr) return 0;  // over the limit: refused before allocating
    program.init_buffer(i, buffers[i]);
  }
  for (size_t i = 0; i < program.num_methods(); ++i) run_method(program, program.method_name(i), buffers.data(), &budget);
  return 0;
}
