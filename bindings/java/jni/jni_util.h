// Helpers shared by the JNI glue (pocket_jni.cpp, pocket_jni_llm.cpp): strings, exceptions
// and the classes JNI_OnLoad caches. The glue calls only the C API (pocket.h, pocket_llm.h).
//
// Strings cross as UTF-8 byte arrays in both directions: Java encodes and decodes them with
// StandardCharsets.UTF_8, because JNI's own string functions speak "modified UTF-8", which
// mangles characters outside the BMP (emoji) and NUL.
#pragma once

#include <jni.h>

#include <string>

#include "pocket/pocket.h"

namespace pocket_jni {

// Global references and ids resolved once in JNI_OnLoad.
struct Cache {
  jclass pocket_exception;       // dev.pocket.PocketException
  jmethodID pocket_exception_of;  // static PocketException fromNative(int, byte[], byte[])
  jclass tensor;                  // dev.pocket.Tensor
  jmethodID tensor_of;            // static Tensor fromNative(int, long[], ByteBuffer)
  jclass byte_buffer;             // java.nio.ByteBuffer
  jmethodID allocate_direct;      // static ByteBuffer allocateDirect(int)
  jclass illegal_argument;        // java.lang.IllegalArgumentException
  jclass illegal_state;           // java.lang.IllegalStateException
  jclass out_of_memory;           // java.lang.OutOfMemoryError
};
extern Cache g;

// Copies a Java byte[] (UTF-8, never NULL here: Java checks) into `out`. False with an
// exception pending when the array cannot be read.
bool utf8_arg(JNIEnv* env, jbyteArray bytes, std::string* out);

// A new byte[] holding `n` bytes at `p` (NULL with an exception pending on failure).
jbyteArray new_bytes(JNIEnv* env, const char* p, size_t n);
jbyteArray new_bytes(JNIEnv* env, const char* nul_terminated);

// Throws dev.pocket.PocketException for a failed C call: its status, status name and
// pk_last_error(). Call it right after the failing pk_ call (the message is per thread and
// lasts until the next pk_ call).
void throw_status(JNIEnv* env, pk_status status);

// Throws `cls` (one of the cached exception classes) with an ASCII message.
void throw_new(JNIEnv* env, jclass cls, const char* message);

// Reinterprets a handle the Java side keeps in a long. Java never passes 0 (closed objects
// are rejected there), but the glue checks anyway so a bug cannot become a crash.
template <typename T>
T* handle(JNIEnv* env, jlong h, const char* what) {
  if (h == 0) {
    throw_new(env, g.illegal_state, what);
    return nullptr;
  }
  return reinterpret_cast<T*>(static_cast<intptr_t>(h));
}

// Registers the runner's natives (pocket_jni_llm.cpp) on `cls`. False with an exception pending.
bool register_llm_natives(JNIEnv* env, jclass cls);

}  // namespace pocket_jni
