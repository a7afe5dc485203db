// JNI glue for dev.pocket (Module, Tensor): the natives of dev.pocket.NativeLib over pocket.h.
//
// Rules that keep the VM safe:
//  - Only the C API is called; every failure becomes a dev.pocket.PocketException carrying the
//    pk_status, its name and pk_last_error(), thrown before any other pk_ call.
//  - Natives are bound with RegisterNatives in JNI_OnLoad, so a Java/C++ signature mismatch fails
//    at load time, and the library exports nothing but JNI_OnLoad.
//  - Java validates arguments (nulls, closed handles, dtype/shape vs data); the glue checks again
//    where a slip would be memory-unsafe, and returns at once when a JNI call leaves an exception.
//  - Tensors cross as direct ByteBuffers borrowed for the call (inputs) and fresh direct
//    ByteBuffers holding a copy (outputs).
#include <cstring>
#include <memory>
#include <vector>

#include "jni_util.h"

namespace pocket_jni {

Cache g;

bool utf8_arg(JNIEnv* env, jbyteArray bytes, std::string* out) {
  if (bytes == nullptr) {
    throw_new(env, g.illegal_argument, "string argument is null");
    return false;
  }
  jsize n = env->GetArrayLength(bytes);
  out->assign(static_cast<size_t>(n), '\0');
  if (n > 0) env->GetByteArrayRegion(bytes, 0, n, reinterpret_cast<jbyte*>(&(*out)[0]));
  return !env->ExceptionCheck();
}

jbyteArray new_bytes(JNIEnv* env, const char* p, size_t n) {
  if (n > static_cast<size_t>(INT32_MAX)) {
    throw_new(env, g.out_of_memory, "string longer than 2 GiB");
    return nullptr;
  }
  jbyteArray a = env->NewByteArray(static_cast<jsize>(n));
  if (a == nullptr) return nullptr;  // OutOfMemoryError pending
  if (n > 0) env->SetByteArrayRegion(a, 0, static_cast<jsize>(n), reinterpret_cast<const jbyte*>(p));
  return a;
}

jbyteArray new_bytes(JNIEnv* env, const char* s) { return new_bytes(env, s ? s : "", s ? strlen(s) : 0); }

void throw_new(JNIEnv* env, jclass cls, const char* message) {
  if (!env->ExceptionCheck()) env->ThrowNew(cls, message);
}

static void throw_pocket(JNIEnv* env, pk_status status, const char* message) {
  if (env->ExceptionCheck()) return;
  jbyteArray name = new_bytes(env, pk_status_string(status));
  if (name == nullptr) return;
  jbyteArray text = new_bytes(env, message);
  if (text == nullptr) return;
  jobject e = env->CallStaticObjectMethod(g.pocket_exception, g.pocket_exception_of, static_cast<jint>(status), name,
                                          text);
  if (e != nullptr && !env->ExceptionCheck()) env->Throw(static_cast<jthrowable>(e));
}

void throw_status(JNIEnv* env, pk_status status) {
  // Copy first: building the exception must not race the thread-local message.
  std::string message = pk_last_error();
  throw_pocket(env, status, message.c_str());
}

}  // namespace pocket_jni

using namespace pocket_jni;

namespace {

// Owns the pk_tensor handles of one execute call.
struct TensorList {
  std::vector<pk_tensor*> items;
  explicit TensorList(size_t n) : items(n, nullptr) {}
  ~TensorList() {
    for (pk_tensor* t : items) pk_tensor_destroy(t);
  }
};

pk_module* module_of(JNIEnv* env, jlong h) { return handle<pk_module>(env, h, "Module is closed"); }

// ------------------------------------------------------------------ loading -------------------

jint api_version(JNIEnv*, jclass) { return pk_api_version(); }

jlong module_load_file(JNIEnv* env, jclass, jbyteArray path_b, jint mode) {
  std::string path;
  if (!utf8_arg(env, path_b, &path)) return 0;
  pk_module* m = nullptr;
  pk_status s = pk_module_load_file(path.c_str(), mode == 1 ? PK_LOAD_READ : PK_LOAD_MMAP, &m);
  if (s != PK_STATUS_OK) {
    throw_status(env, s);
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(m));
}

jlong load_buffer(JNIEnv* env, const void* data, size_t size) {
  pk_module* m = nullptr;
  pk_status s = pk_module_load_buffer(data, size, &m);
  if (s != PK_STATUS_OK) {
    throw_status(env, s);
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(m));
}

// The program in `length` bytes of `fd` at `offset` (Java checked that both are >= 0).
jlong module_load_fd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length, jint mode) {
  pk_module* m = nullptr;
  pk_status s = pk_module_load_fd(fd, static_cast<uint64_t>(offset), static_cast<uint64_t>(length),
                                  mode == 1 ? PK_LOAD_READ : PK_LOAD_MMAP, &m);
  if (s != PK_STATUS_OK) {
    throw_status(env, s);
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(m));
}

jboolean module_is_mapped(JNIEnv* env, jclass, jlong h) {
  pk_module* m = module_of(env, h);
  return m != nullptr && pk_module_is_mapped(m) ? JNI_TRUE : JNI_FALSE;
}

jlong module_load_bytes(JNIEnv* env, jclass, jbyteArray bytes) {
  jsize n = env->GetArrayLength(bytes);
  std::vector<jbyte> copy(static_cast<size_t>(n));
  if (n > 0) env->GetByteArrayRegion(bytes, 0, n, copy.data());
  if (env->ExceptionCheck()) return 0;
  return load_buffer(env, copy.data(), copy.size());
}

jlong module_load_direct(JNIEnv* env, jclass, jobject buffer) {
  void* data = env->GetDirectBufferAddress(buffer);
  jlong size = env->GetDirectBufferCapacity(buffer);
  if (data == nullptr || size < 0) {
    throw_new(env, g.illegal_argument, "program buffer is not a direct ByteBuffer");
    return 0;
  }
  return load_buffer(env, data, static_cast<size_t>(size));
}

void module_destroy(JNIEnv*, jclass, jlong h) { pk_module_destroy(reinterpret_cast<pk_module*>(static_cast<intptr_t>(h))); }

void module_set_num_threads(JNIEnv* env, jclass, jlong h, jint n) {
  pk_module* m = module_of(env, h);
  if (m == nullptr) return;
  pk_status s = pk_module_set_num_threads(m, n);
  if (s != PK_STATUS_OK) throw_status(env, s);
}

// ------------------------------------------------------------------ introspection -------------

jobjectArray new_byte_arrays(JNIEnv* env, size_t n) {
  jclass byte_array = env->FindClass("[B");
  if (byte_array == nullptr) return nullptr;
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(n), byte_array, nullptr);
  env->DeleteLocalRef(byte_array);
  return out;
}

bool set_bytes(JNIEnv* env, jobjectArray array, size_t i, const char* s) {
  jbyteArray b = new_bytes(env, s);
  if (b == nullptr) return false;
  env->SetObjectArrayElement(array, static_cast<jsize>(i), b);
  env->DeleteLocalRef(b);
  return !env->ExceptionCheck();
}

jobjectArray module_method_names(JNIEnv* env, jclass, jlong h) {
  pk_module* m = module_of(env, h);
  if (m == nullptr) return nullptr;
  size_t n = pk_module_method_count(m);
  jobjectArray out = new_byte_arrays(env, n);
  for (size_t i = 0; out != nullptr && i < n; ++i)
    if (!set_bytes(env, out, i, pk_module_method_name(m, i))) return nullptr;
  return out;
}

// Keys and values interleaved: key0, value0, key1, value1, ...
jobjectArray module_metadata(JNIEnv* env, jclass, jlong h) {
  pk_module* m = module_of(env, h);
  if (m == nullptr) return nullptr;
  size_t n = pk_module_metadata_count(m);
  jobjectArray out = new_byte_arrays(env, 2 * n);
  for (size_t i = 0; out != nullptr && i < n; ++i) {
    const char* key = nullptr;
    const char* value = nullptr;
    pk_status s = pk_module_metadata_entry(m, i, &key, &value);
    if (s != PK_STATUS_OK) {
      throw_status(env, s);
      return nullptr;
    }
    if (!set_bytes(env, out, 2 * i, key) || !set_bytes(env, out, 2 * i + 1, value)) return nullptr;
  }
  return out;
}

jint module_io_count(JNIEnv* env, jclass, jlong h, jbyteArray method_b, jboolean input) {
  pk_module* m = module_of(env, h);
  std::string method;
  if (m == nullptr || !utf8_arg(env, method_b, &method)) return 0;
  size_t n = 0;
  pk_status s = input ? pk_module_input_count(m, method.c_str(), &n) : pk_module_output_count(m, method.c_str(), &n);
  if (s != PK_STATUS_OK) throw_status(env, s);
  return static_cast<jint>(n);
}

// [dtype, ndim, min_shape[ndim]..., max_shape[ndim]...]
jlongArray module_io_info(JNIEnv* env, jclass, jlong h, jbyteArray method_b, jint index, jboolean input) {
  pk_module* m = module_of(env, h);
  std::string method;
  if (m == nullptr || !utf8_arg(env, method_b, &method)) return nullptr;
  if (index < 0) {
    throw_new(env, g.illegal_argument, "negative index");
    return nullptr;
  }
  pk_dtype dtype = PK_DTYPE_FLOAT32;
  size_t ndim = 0;
  int64_t lo[PK_MAX_DIMS], hi[PK_MAX_DIMS];
  pk_status s = (input ? pk_module_input_info : pk_module_output_info)(m, method.c_str(), static_cast<size_t>(index),
                                                                       &dtype, &ndim, lo, hi, PK_MAX_DIMS);
  if (s != PK_STATUS_OK) {
    throw_status(env, s);
    return nullptr;
  }
  std::vector<jlong> packed = {static_cast<jlong>(dtype), static_cast<jlong>(ndim)};
  packed.insert(packed.end(), lo, lo + ndim);
  packed.insert(packed.end(), hi, hi + ndim);
  jlongArray out = env->NewLongArray(static_cast<jsize>(packed.size()));
  if (out != nullptr) env->SetLongArrayRegion(out, 0, static_cast<jsize>(packed.size()), packed.data());
  return out;
}

// ------------------------------------------------------------------ execute -------------------

// Wraps input i (a direct buffer borrowed for the call) in a pk_tensor.
bool borrow_input(JNIEnv* env, jobjectArray buffers, jint dtype, jobjectArray shapes, jsize i, pk_tensor** out) {
  jobject buffer = env->GetObjectArrayElement(buffers, i);
  auto shape = static_cast<jlongArray>(env->GetObjectArrayElement(shapes, i));
  if (buffer == nullptr || shape == nullptr) {
    throw_new(env, g.illegal_argument, "input tensor data or shape is null");
    return false;
  }
  void* data = env->GetDirectBufferAddress(buffer);
  jlong capacity = env->GetDirectBufferCapacity(buffer);
  jsize ndim = env->GetArrayLength(shape);
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  if (ndim > 0) env->GetLongArrayRegion(shape, 0, ndim, reinterpret_cast<jlong*>(dims.data()));
  env->DeleteLocalRef(buffer);
  env->DeleteLocalRef(shape);
  if (env->ExceptionCheck()) return false;
  if (capacity < 0) {
    throw_new(env, g.illegal_argument, "input tensor data is not a direct ByteBuffer");
    return false;
  }
  pk_status s = pk_tensor_create_borrowed(static_cast<pk_dtype>(dtype), dims.data(), dims.size(), data,
                                          static_cast<size_t>(capacity), out);
  if (s != PK_STATUS_OK) throw_status(env, s);
  return s == PK_STATUS_OK;
}

// A dev.pocket.Tensor holding a copy of `t` in a new direct ByteBuffer.
jobject to_java_tensor(JNIEnv* env, pk_tensor* t) {
  size_t nbytes = pk_tensor_nbytes(t);
  if (nbytes > static_cast<size_t>(INT32_MAX)) {
    throw_pocket(env, PK_STATUS_OUT_OF_RANGE, "output tensor larger than 2 GiB does not fit a ByteBuffer");
    return nullptr;
  }
  size_t ndim = pk_tensor_ndim(t);
  jlongArray shape = env->NewLongArray(static_cast<jsize>(ndim));
  if (shape == nullptr) return nullptr;
  if (ndim > 0) env->SetLongArrayRegion(shape, 0, static_cast<jsize>(ndim), reinterpret_cast<const jlong*>(pk_tensor_shape(t)));
  jobject buffer = env->CallStaticObjectMethod(g.byte_buffer, g.allocate_direct, static_cast<jint>(nbytes));
  if (buffer == nullptr || env->ExceptionCheck()) return nullptr;
  void* dst = env->GetDirectBufferAddress(buffer);
  if (nbytes > 0) {
    if (dst == nullptr) {
      throw_new(env, g.illegal_state, "direct buffer without an address");
      return nullptr;
    }
    memcpy(dst, pk_tensor_data(t), nbytes);
  }
  jobject out = env->CallStaticObjectMethod(g.tensor, g.tensor_of, static_cast<jint>(pk_tensor_dtype(t)), shape, buffer);
  env->DeleteLocalRef(shape);
  env->DeleteLocalRef(buffer);
  return env->ExceptionCheck() ? nullptr : out;
}

jobjectArray module_execute(JNIEnv* env, jclass, jlong h, jbyteArray method_b, jobjectArray buffers, jintArray dtypes_a,
                            jobjectArray shapes) {
  pk_module* m = module_of(env, h);
  std::string method;
  if (m == nullptr || !utf8_arg(env, method_b, &method)) return nullptr;
  jsize n_in = env->GetArrayLength(buffers);
  if (env->GetArrayLength(dtypes_a) != n_in || env->GetArrayLength(shapes) != n_in) {
    throw_new(env, g.illegal_argument, "inputs, dtypes and shapes differ in length");
    return nullptr;
  }
  std::vector<jint> dtypes(static_cast<size_t>(n_in));
  if (n_in > 0) env->GetIntArrayRegion(dtypes_a, 0, n_in, dtypes.data());
  TensorList inputs(static_cast<size_t>(n_in));
  for (jsize i = 0; i < n_in; ++i)
    if (!borrow_input(env, buffers, dtypes[i], shapes, i, &inputs.items[i])) return nullptr;
  size_t n_out = 0;
  pk_status s = pk_module_output_count(m, method.c_str(), &n_out);
  TensorList outputs(n_out);
  if (s == PK_STATUS_OK)
    s = pk_module_execute(m, method.c_str(), inputs.items.data(), inputs.items.size(), outputs.items.data(), n_out);
  if (s != PK_STATUS_OK) {
    throw_status(env, s);
    return nullptr;
  }
  jobjectArray result = env->NewObjectArray(static_cast<jsize>(n_out), g.tensor, nullptr);
  for (size_t i = 0; result != nullptr && i < n_out; ++i) {
    jobject t = to_java_tensor(env, outputs.items[i]);
    if (t == nullptr) return nullptr;
    env->SetObjectArrayElement(result, static_cast<jsize>(i), t);
    env->DeleteLocalRef(t);
  }
  return result;
}

// ------------------------------------------------------------------ registration --------------

#define NATIVE(name, sig, fn) {const_cast<char*>(name), const_cast<char*>(sig), reinterpret_cast<void*>(fn)}

const JNINativeMethod kModuleNatives[] = {
    NATIVE("apiVersion", "()I", api_version),
    NATIVE("moduleLoadFile", "([BI)J", module_load_file),
    NATIVE("moduleLoadBytes", "([B)J", module_load_bytes),
    NATIVE("moduleLoadDirect", "(Ljava/nio/ByteBuffer;)J", module_load_direct),
    NATIVE("moduleLoadFd", "(IJJI)J", module_load_fd),
    NATIVE("moduleIsMapped", "(J)Z", module_is_mapped),
    NATIVE("moduleDestroy", "(J)V", module_destroy),
    NATIVE("moduleSetNumThreads", "(JI)V", module_set_num_threads),
    NATIVE("moduleMethodNames", "(J)[[B", module_method_names),
    NATIVE("moduleMetadata", "(J)[[B", module_metadata),
    NATIVE("moduleIoCount", "(J[BZ)I", module_io_count),
    NATIVE("moduleIoInfo", "(J[BIZ)[J", module_io_info),
    NATIVE("moduleExecute", "(J[B[Ljava/nio/ByteBuffer;[I[[J)[Ldev/pocket/Tensor;", module_execute),
};

#undef NATIVE

jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

bool init_cache(JNIEnv* env) {
  g.pocket_exception = global_class(env, "dev/pocket/PocketException");
  g.tensor = global_class(env, "dev/pocket/Tensor");
  g.byte_buffer = global_class(env, "java/nio/ByteBuffer");
  g.illegal_argument = global_class(env, "java/lang/IllegalArgumentException");
  g.illegal_state = global_class(env, "java/lang/IllegalStateException");
  g.out_of_memory = global_class(env, "java/lang/OutOfMemoryError");
  if (!g.pocket_exception || !g.tensor || !g.byte_buffer || !g.illegal_argument || !g.illegal_state || !g.out_of_memory)
    return false;
  g.pocket_exception_of =
      env->GetStaticMethodID(g.pocket_exception, "fromNative", "(I[B[B)Ldev/pocket/PocketException;");
  g.tensor_of = env->GetStaticMethodID(g.tensor, "fromNative", "(I[JLjava/nio/ByteBuffer;)Ldev/pocket/Tensor;");
  g.allocate_direct = env->GetStaticMethodID(g.byte_buffer, "allocateDirect", "(I)Ljava/nio/ByteBuffer;");
  return g.pocket_exception_of && g.tensor_of && g.allocate_direct;
}

}  // namespace

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  if (!init_cache(env)) return JNI_ERR;
  jclass natives = env->FindClass("dev/pocket/NativeLib");
  if (natives == nullptr) return JNI_ERR;
  jint n = static_cast<jint>(sizeof kModuleNatives / sizeof kModuleNatives[0]);
  if (env->RegisterNatives(natives, kModuleNatives, n) != JNI_OK) return JNI_ERR;
  if (!register_llm_natives(env, natives)) return JNI_ERR;
  env->DeleteLocalRef(natives);
  return JNI_VERSION_1_6;
}
