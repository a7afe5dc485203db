// pocket._native_testing: runs one registered kernel on Python values, for the kernel tests
// (tests/kernels) and benchmarks/kernel_speedups.py. Built only for development
// (POCKET_PYTHON_TESTING, set by scripts/setup.sh --test and scripts/dev_build.sh); the
// shipped wheel has pocket._native alone.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "heap_allocator.h"
#include "pocket/kernel.h"
#include "shared.h"
#include "thread_pool.h"

namespace py = pybind11;
using pocket::Error;

namespace {

[[noreturn]] void raise(Error e, const std::string& message) { raise_pocket_error(e, message); }

struct KernelArgs {
  std::deque<pocket::Value> values;  // stable addresses
  std::deque<std::vector<uint32_t>> index_lists;
  std::deque<std::vector<int32_t>> tensor_lists;
  std::deque<std::vector<double>> double_lists;
  std::deque<std::vector<uint8_t>> bool_lists;
  std::deque<std::string> strings;
  std::vector<py::array> arrays;

  pocket::Value* add(pocket::Value v) {
    values.push_back(v);
    return &values.back();
  }

  // ("floats", [...]) and ("bools", [...]) mark double and bool lists.
  static std::string tagged_list(py::handle h) {
    if (!py::isinstance<py::tuple>(h) || py::len(h) != 2) return "";
    py::object first = py::reinterpret_borrow<py::tuple>(h)[0];
    return py::isinstance<py::str>(first) ? first.cast<std::string>() : "";
  }

  pocket::Value* from_python(py::handle h) {
    pocket::Value v;
    if (h.is_none()) return add(v);
    if (py::isinstance<py::bool_>(h)) { v.tag = pocket::Value::Tag::Bool; v.b = h.cast<bool>(); return add(v); }
    if (py::isinstance<py::int_>(h)) { v.tag = pocket::Value::Tag::Int; v.i = h.cast<int64_t>(); return add(v); }
    if (py::isinstance<py::float_>(h)) { v.tag = pocket::Value::Tag::Double; v.d = h.cast<double>(); return add(v); }
    if (py::isinstance<py::str>(h)) {
      strings.push_back(h.cast<std::string>());
      v.tag = pocket::Value::Tag::String;
      v.str.data = strings.back().c_str();
      v.str.size = strings.back().size();
      return add(v);
    }
    if (py::isinstance<py::array>(h)) {
      arrays.push_back(py::reinterpret_borrow<py::array>(h));
      v.tag = pocket::Value::Tag::Tensor;
      new (&v.tensor) pocket::Tensor(tensor_view(arrays.back()));
      return add(v);
    }
    std::string tag = tagged_list(h);
    if (tag == "floats") {
      double_lists.push_back(py::reinterpret_borrow<py::tuple>(h)[1].cast<std::vector<double>>());
      v.tag = pocket::Value::Tag::DoubleList;
      v.double_list = {double_lists.back().data(), double_lists.back().size()};
      return add(v);
    }
    if (tag == "bools") {
      auto bs = py::reinterpret_borrow<py::tuple>(h)[1].cast<std::vector<bool>>();
      bool_lists.emplace_back(bs.begin(), bs.end());
      v.tag = pocket::Value::Tag::BoolList;
      v.bool_list = {bool_lists.back().data(), bool_lists.back().size()};
      return add(v);
    }
    if (py::isinstance<py::list>(h)) return list_from_python(py::reinterpret_borrow<py::list>(h));
    raise(Error::InvalidArgument, "run_kernel: unsupported argument " + std::string(py::repr(h)));
  }

  // [ints] -> IntList; [arrays] -> TensorList; [arrays or None] -> OptionalTensorList.
  pocket::Value* list_from_python(py::list items) {
    bool tensors = false, has_none = false;
    for (py::handle item : items) {
      tensors |= py::isinstance<py::array>(item);
      has_none |= item.is_none();
    }
    pocket::Value v;
    if (!tensors && !has_none) {
      std::vector<uint32_t> idx;
      for (py::handle item : items) idx.push_back(static_cast<uint32_t>(index_of(from_python(item))));
      index_lists.push_back(std::move(idx));
      v.tag = pocket::Value::Tag::IntList;
      v.int_list = {index_lists.back().data(), index_lists.back().size(), nullptr};
      return add(v);
    }
    std::vector<int32_t> idx;
    for (py::handle item : items) idx.push_back(item.is_none() ? -1 : static_cast<int32_t>(index_of(from_python(item))));
    tensor_lists.push_back(std::move(idx));
    v.tag = has_none ? pocket::Value::Tag::OptionalTensorList : pocket::Value::Tag::TensorList;
    v.tensor_list = {tensor_lists.back().data(), tensor_lists.back().size(), nullptr};
    return add(v);
  }

  size_t index_of(pocket::Value* v) {
    for (size_t i = 0; i < values.size(); ++i)
      if (&values[i] == v) return i;
    return 0;
  }
};

// Runs kernel `name` (from the table `kernels`, see features_for) `repeat` times; *seconds
// gets the fastest call's time.
py::list run_kernel_timed(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                          int num_threads, int repeat, double* seconds) {
  const char* dot = std::strchr(name.c_str(), '.');
  std::string op = dot ? name.substr(0, dot - name.c_str()) : name;
  std::string overload = dot ? std::string(dot + 1) : "";
  const pocket::KernelEntry* entry = pocket::find_kernel(pocket::portable_kernels(), op.c_str(), overload.c_str());
  if (entry == nullptr) raise(Error::NotFound, "no kernel named '" + name + "'");
  pocket::KernelEntry chosen = *entry;
  chosen.fn = pocket::detail::kernel_for(entry->name, features_for(kernels));
  const pocket::KernelEntry* k = &chosen;
  KernelArgs args;
  std::vector<size_t> arg_index;
  for (py::handle h : inputs) arg_index.push_back(args.index_of(args.from_python(h)));
  size_t first_out = arg_index.size();
  for (py::handle h : outputs) arg_index.push_back(args.index_of(args.from_python(h)));
  std::vector<pocket::Value> table(args.values.begin(), args.values.end());
  for (pocket::Value& v : table) {
    if (v.tag == pocket::Value::Tag::IntList) v.int_list.values = table.data();
    if (v.tag == pocket::Value::Tag::TensorList || v.tag == pocket::Value::Tag::OptionalTensorList)
      v.tensor_list.values = table.data();
  }
  if (arg_index.size() != pocket::signature_arity(k->signature))
    raise(Error::InvalidArgument, name + " takes " + std::to_string(pocket::signature_arity(k->signature)) +
                                      " arguments (signature " + k->signature + "), got " + std::to_string(arg_index.size()));
  std::vector<pocket::Value*> ptrs;
  for (size_t a = 0, c = 0; a < arg_index.size(); ++a, ++c) {
    if (k->signature[c] == '>') ++c;
    // A Python list of tensors without None also stands for a Tensor?[] argument.
    if (k->signature[c] == 'M' && table[arg_index[a]].tag == pocket::Value::Tag::TensorList)
      table[arg_index[a]].tag = pocket::Value::Tag::OptionalTensorList;
    if (!pocket::value_matches(table[arg_index[a]], k->signature[c]))
      raise(Error::InvalidArgument, name + ": argument " + std::to_string(a) + " is " +
                                        pocket::value_tag_name(table[arg_index[a]].tag) + ", expected kind '" +
                                        k->signature[c] + "'");
    ptrs.push_back(&table[arg_index[a]]);
  }
  pocket::Diag diag;
  pocket::HeapAllocator temp;
  pocket::KernelContext ctx;
  ctx.diag = &diag;
  ctx.temp = &temp;
  std::unique_ptr<pocket::WorkerPool> pool;
  if (num_threads > 1) {
    pool.reset(new pocket::WorkerPool(num_threads));
    ctx.threads = pool.get();
  }
  Error e = Error::Ok;
  *seconds = 0;
  for (int i = 0; i < (repeat > 1 ? repeat : 1) && e == Error::Ok; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    e = k->fn(ctx, ptrs.data());
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *seconds = i == 0 || dt < *seconds ? dt : *seconds;
    temp.reset();
  }
  if (e != Error::Ok) raise(e, name + ": " + diag.message);
  py::list result;
  for (size_t a = first_out; a < arg_index.size(); ++a) {
    const pocket::Value& v = table[arg_index[a]];
    if (v.is_tensor()) {
      // The output array was the kernel's memory: return a view with the final shape.
      result.append(to_numpy(v.tensor));
    } else if (v.tag == pocket::Value::Tag::Int) {
      result.append(v.i);
    } else if (v.tag == pocket::Value::Tag::Bool) {
      result.append(v.b);
    } else if (v.tag == pocket::Value::Tag::TensorList) {
      py::list items;
      for (size_t i = 0; i < v.tensor_list.size; ++i) items.append(to_numpy(*v.tensor_list[i]));
      result.append(items);
    } else {
      result.append(py::none());
    }
  }
  return result;
}

py::list run_kernel(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                    int num_threads) {
  double seconds = 0;
  return run_kernel_timed(name, inputs, outputs, kernels, num_threads, 1, &seconds);
}

double time_kernel(const std::string& name, py::list inputs, py::list outputs, const std::string& kernels,
                   int num_threads, int repeat) {
  double seconds = 0;
  run_kernel_timed(name, inputs, outputs, kernels, num_threads, repeat, &seconds);
  return seconds;
}

#if defined(__linux__)
bool may_run_on(int cpu) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 && cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
#else
void pin_to(int) {}  // not reached: core_round_trip_ns refuses first
#endif

// The median time for a cache line to go from core `a` to core `b` and back (a flag bounced
// between two spinning threads), in ns: what a thread pool's hand-off costs. On a VM it
// changes when the host moves the virtual CPUs (between cores that share a cache and cores
// that do not).
double core_round_trip_ns(int a, int b, int rounds) {
  if (rounds < 1) throw py::value_error("rounds must be positive");
#if defined(__linux__)
  // Two threads spinning on one core would take a time slice per trip: both must be pinnable.
  if (a == b || !may_run_on(a) || !may_run_on(b))
    throw py::value_error("core_round_trip_ns: cores " + std::to_string(a) + " and " + std::to_string(b) +
                          " are not two distinct cores this process may run on");
#else
  throw py::value_error("core_round_trip_ns needs Linux (it pins its two threads to the cores)");
#endif
  py::gil_scoped_release release;
  // Both ends on threads of their own: pinning the caller would keep it pinned afterwards.
  alignas(64) std::atomic<int64_t> flag{0};
  constexpr int64_t kBatch = 1000;
  const int64_t trips = int64_t(rounds) * kBatch;
  std::vector<double> batches;
  std::thread echo([&] {
    pin_to(b);
    for (int64_t i = 0; i < trips; ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  std::thread serve([&] {
    pin_to(a);
    for (int64_t i = 0; i < trips; i += kBatch) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t j = i; j < i + kBatch; ++j) {
        flag.store(2 * j + 1, std::memory_order_release);
        while (flag.load(std::memory_order_acquire) != 2 * j + 2) {
        }
      }
      batches.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                        kBatch);
    }
  });
  serve.join();
  echo.join();
  std::nth_element(batches.begin(), batches.begin() + rounds / 2, batches.end());
  return batches[rounds / 2];
}

}  // namespace

PYBIND11_MODULE(_native_testing, m) {
  m.doc() = "Pocket's kernel test harness (development builds only).";
  m.def("run_kernel", &run_kernel, py::arg("name"), py::arg("inputs"), py::arg("outputs"),
        py::arg("table") = "portable", py::arg("num_threads") = 1,
        "Runs one kernel; outputs are preallocated arrays (their size is the capacity). table:\n"
        "\"portable\", \"best\" (what a Module on this CPU uses) or CPU feature names\n"
        "(\"avx2_fma,avx512\": the kernels a CPU with only those features would use).\n"
        "num_threads > 1 runs it on a thread pool of that size.");
  m.def("time_kernel", &time_kernel, py::arg("name"), py::arg("inputs"), py::arg("outputs"),
        py::arg("table") = "portable", py::arg("num_threads") = 1, py::arg("repeat") = 10,
        "Runs a kernel as run_kernel does, `repeat` times on one thread pool; returns the fastest\n"
        "call's time in seconds (for benchmarks).");
  m.def("core_round_trip_ns", &core_round_trip_ns, py::arg("a") = 0, py::arg("b") = 1, py::arg("rounds") = 50,
        "The median time, in ns, for a cache line to go from core a to core b and back (batches of\n"
        "1000 trips): what handing work to another thread costs (for benchmarks).");
}
