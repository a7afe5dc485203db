// What pocket._native and pocket._native_testing (the kernel test harness, built for
// development only, never shipped) share: PocketError, text from files, numpy arrays as
// tensors and kernel tables by name. Defined in shared.cpp, which both modules compile.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "../../runtime_core/kernels/optimized/optimized.h"
#include "pocket/error.h"
#include "pocket/tensor.h"

// Raises pocket.PocketError(code, status, message) (pocket/_errors.py); invalid UTF-8 in
// `message` is replaced.
[[noreturn]] void raise_pocket_error(pocket::Error e, const std::string& message);

// Text from a file may be invalid UTF-8 (a corrupted name): decoded with replacement.
pybind11::str text(const std::string& s);

// numpy dtypes <-> Pocket's (bfloat16 travels as raw 16-bit words: numpy uint16).
pocket::ScalarType dtype_of(const pybind11::dtype& dt);
pybind11::dtype numpy_dtype(pocket::ScalarType t);

// A Tensor viewing a numpy array, strides included (no copy).
pocket::Tensor tensor_view(pybind11::array& a);

// A new contiguous array with a copy of t's elements.
pybind11::array to_numpy(const pocket::Tensor& t);

// The CPU features a kernel table is chosen for: "portable" (none), "best" (this CPU's), or
// a comma-separated list of feature names (those this CPU lacks are dropped: running them
// would fault).
pocket::detail::CpuFeatures features_for(const std::string& table);
