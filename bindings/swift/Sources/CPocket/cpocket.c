/* SwiftPM needs a source file in a C target. CPocket is the headers in include/ (the C API,
 * pocket.h and pocket_llm.h); the code is libpocket, linked as Package.swift says. */
#include "pocket/pocket_llm.h"
