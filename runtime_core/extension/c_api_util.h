// Internal helpers shared by the C API's implementation files (c_api.cpp and the LLM
// runner's c_api_runner.cpp): the thread-local last error and exception fencing.
#pragma once

#include <new>
#include <string>

#include "pocket/error.h"
#include "pocket/pocket.h"

namespace pocket {
namespace detail {

// Sets pk_last_error() and returns `e` as a pk_status.
pk_status c_fail(Error e, std::string message);
// Clears pk_last_error() and returns PK_STATUS_OK.
pk_status c_ok();

// Runs f() so that no exception crosses the C boundary (std::bad_alloc -> OUT_OF_MEMORY).
template <typename F>
pk_status c_guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return c_fail(Error::OutOfMemory, "out of memory");
  } catch (...) {
    return c_fail(Error::Internal, "internal error");
  }
}

}  // namespace detail
}  // namespace pocket
