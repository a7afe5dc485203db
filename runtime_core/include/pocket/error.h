// Errors inside the C++ runtime: one enum shared with the C API (its numbers are the stable
// pk_status codes). The core never throws: functions return an Error and write their results
// through out-parameters.
//
// Messages: the object that failed (Program, Method, KernelContext) keeps a fixed-size message
// buffer, filled with Diag::fail(); the message names the thing that failed (file, method,
// op, value index, expected vs actual).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace pocket {

// Keep in step with pk_status in pocket.h (same numbers).
enum class Error : int32_t {
  Ok = 0,
  InvalidArgument = 1,  // the caller passed something wrong (shape, dtype, count, name, NULL)
  InvalidProgram = 2,   // the file is malformed or inconsistent
  Unsupported = 3,      // well-formed but not supported by this runtime (version, op, dtype)
  NotFound = 4,         // no such method, input, metadata key or file
  OutOfMemory = 5,
  Io = 6,               // reading the file failed
  OutOfRange = 7,       // an index, shape or length outside its bounds (incl. context overflow)
  Internal = 8,
  Cancelled = 9,        // the caller asked to stop (e.g. LLM generation)
  Busy = 10,            // another thread is using the object (an LLM runner runs one call at a time)
};

const char* error_name(Error e);

// A fixed-size message buffer; no heap.
struct Diag {
  char message[512] = {0};

  // Formats the message (printf-style) and returns `e`, so failures read
  //   return diag.fail(Error::InvalidProgram, "value %u: segment %u out of range", v, s);
  Error fail(Error e, const char* fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;
  Error vfail(Error e, const char* fmt, va_list args);
  void clear() { message[0] = '\0'; }
};

}  // namespace pocket
