#include "pocket/error.h"

#include <cstdio>

namespace pocket {

const char* error_name(Error e) {
  switch (e) {
    case Error::Ok: return "OK";
    case Error::InvalidArgument: return "INVALID_ARGUMENT";
    case Error::InvalidProgram: return "INVALID_PROGRAM";
    case Error::Unsupported: return "UNSUPPORTED";
    case Error::NotFound: return "NOT_FOUND";
    case Error::OutOfMemory: return "OUT_OF_MEMORY";
    case Error::Io: return "IO";
    case Error::OutOfRange: return "OUT_OF_RANGE";
    case Error::Internal: return "INTERNAL";
    case Error::Cancelled: return "CANCELLED";
    case Error::Busy: return "BUSY";
  }
  return "UNKNOWN";
}

Error Diag::vfail(Error e, const char* fmt, va_list args) {
  vsnprintf(message, sizeof message, fmt, args);
  return e;
}

Error Diag::fail(Error e, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vfail(e, fmt, args);
  va_end(args);
  return e;
}

}  // namespace pocket
