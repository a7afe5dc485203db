// JNI glue for dev.pocket.LlmModule: the runner natives of dev.pocket.NativeLib over pocket_llm.h.
//
// The generation config crosses as primitives and is rebuilt per call (no native handle to
// leak); its values are checked by pk_generation_config's setters only (GenerationConfig's
// builder asks them through generationConfigCheck). A generation is pulled (pk_runner_start,
// pk_runner_next: the runner's one loop) and each piece handed to Java through
// dev.pocket.PieceSink.onPiece(byte[]): the sink decodes UTF-8, calls the user's LlmCallback,
// catches whatever it throws and answers false, which stops the generation (pk_runner_stop);
// LlmModule rethrows it after the native call returns. Each piece's
// local reference is deleted at once, so long generations never fill the local reference table.
#include <string>
#include <vector>

#include "jni_util.h"
#include "pocket/pocket_llm.h"

using namespace pocket_jni;

namespace {

pk_runner* runner_of(JNIEnv* env, jlong h) { return handle<pk_runner>(env, h, "LlmModule is closed"); }

bool check(JNIEnv* env, pk_status s) {
  if (s != PK_STATUS_OK) throw_status(env, s);
  return s == PK_STATUS_OK;
}

struct ConfigHolder {
  pk_generation_config* c = nullptr;
  ~ConfigHolder() { pk_generation_config_destroy(c); }
};

// Builds a pk_generation_config from the values GenerationConfig's builder had checked.
bool make_config(JNIEnv* env, jint max_new, jfloat temperature, jint top_k, jfloat top_p, jfloat min_p, jfloat penalty,
                 jlong seed, jobjectArray stops, ConfigHolder* out) {
  if (!check(env, pk_generation_config_create(&out->c))) return false;
  pk_generation_config* c = out->c;
  if (!check(env, pk_generation_config_set_max_new_tokens(c, max_new)) ||
      !check(env, pk_generation_config_set_temperature(c, temperature)) ||
      !check(env, pk_generation_config_set_top_k(c, top_k)) || !check(env, pk_generation_config_set_top_p(c, top_p)) ||
      !check(env, pk_generation_config_set_min_p(c, min_p)) ||
      !check(env, pk_generation_config_set_repetition_penalty(c, penalty)) ||
      !check(env, pk_generation_config_set_seed(c, static_cast<uint64_t>(seed))))
    return false;
  jsize n = stops ? env->GetArrayLength(stops) : 0;
  for (jsize i = 0; i < n; ++i) {
    auto b = static_cast<jbyteArray>(env->GetObjectArrayElement(stops, i));
    std::string stop;
    bool ok = utf8_arg(env, b, &stop);
    env->DeleteLocalRef(b);
    if (!ok || !check(env, pk_generation_config_add_stop_string(c, stop.c_str()))) return false;
  }
  return true;
}

// GenerationConfig.Builder's check of its values: pk_generation_config's setters, the one place
// sampler values are checked; a refused value throws IllegalArgumentException with their message.
void generation_config_check(JNIEnv* env, jclass, jint max_new, jfloat temperature, jint top_k, jfloat top_p,
                             jfloat min_p, jfloat penalty) {
  ConfigHolder config;
  if (!check(env, pk_generation_config_create(&config.c))) return;
  pk_generation_config* c = config.c;
  pk_status s = pk_generation_config_set_max_new_tokens(c, max_new);
  if (s == PK_STATUS_OK) s = pk_generation_config_set_temperature(c, temperature);
  if (s == PK_STATUS_OK) s = pk_generation_config_set_top_k(c, top_k);
  if (s == PK_STATUS_OK) s = pk_generation_config_set_top_p(c, top_p);
  if (s == PK_STATUS_OK) s = pk_generation_config_set_min_p(c, min_p);
  if (s == PK_STATUS_OK) s = pk_generation_config_set_repetition_penalty(c, penalty);
  if (s == PK_STATUS_INVALID_ARGUMENT) {
    throw_new(env, g.illegal_argument, pk_last_error());
  } else {
    check(env, s);
  }
}

// ------------------------------------------------------------------ lifecycle -----------------

jlong runner_create(JNIEnv* env, jclass, jbyteArray model_b, jbyteArray tokenizer_b) {
  std::string model, tokenizer;
  if (!utf8_arg(env, model_b, &model)) return 0;
  if (tokenizer_b != nullptr && !utf8_arg(env, tokenizer_b, &tokenizer)) return 0;
  pk_runner* r = nullptr;
  if (!check(env, pk_runner_create(model.c_str(), tokenizer_b ? tokenizer.c_str() : nullptr, &r))) return 0;
  return static_cast<jlong>(reinterpret_cast<intptr_t>(r));
}

// The LLM program in `length` bytes of `fd` at `offset` (Java checked that both are >= 0).
jlong runner_create_fd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length, jbyteArray tokenizer_b) {
  std::string tokenizer;
  if (tokenizer_b != nullptr && !utf8_arg(env, tokenizer_b, &tokenizer)) return 0;
  pk_runner* r = nullptr;
  if (!check(env, pk_runner_create_fd(fd, static_cast<uint64_t>(offset), static_cast<uint64_t>(length),
                                      tokenizer_b ? tokenizer.c_str() : nullptr, &r)))
    return 0;
  return static_cast<jlong>(reinterpret_cast<intptr_t>(r));
}

void runner_destroy(JNIEnv*, jclass, jlong h) { pk_runner_destroy(reinterpret_cast<pk_runner*>(static_cast<intptr_t>(h))); }

void runner_set_num_threads(JNIEnv* env, jclass, jlong h, jint n) {
  if (pk_runner* r = runner_of(env, h)) check(env, pk_runner_set_num_threads(r, n));
}

// ------------------------------------------------------------------ generation ----------------

struct Sink {
  JNIEnv* env;
  jobject sink;
  jmethodID on_piece;
};

// pk_piece_callback: hands one piece to PieceSink.onPiece; nonzero (stop) when the sink says so
// or a JNI call left an exception.
int on_piece(const char* piece, size_t size, void* user) {
  auto* s = static_cast<Sink*>(user);
  JNIEnv* env = s->env;
  if (env->ExceptionCheck()) return 1;
  jbyteArray bytes = new_bytes(env, piece, size);
  if (bytes == nullptr) return 1;
  jboolean go_on = env->CallBooleanMethod(s->sink, s->on_piece, bytes);
  env->DeleteLocalRef(bytes);
  return env->ExceptionCheck() || !go_on ? 1 : 0;
}

void runner_generate(JNIEnv* env, jclass, jlong h, jbyteArray text_b, jboolean chat, jint max_new, jfloat temperature,
                     jint top_k, jfloat top_p, jfloat min_p, jfloat penalty, jlong seed, jobjectArray stops,
                     jobject sink) {
  pk_runner* r = runner_of(env, h);
  std::string text;
  ConfigHolder config;
  if (r == nullptr || !utf8_arg(env, text_b, &text) ||
      !make_config(env, max_new, temperature, top_k, top_p, min_p, penalty, seed, stops, &config))
    return;
  jclass sink_class = env->GetObjectClass(sink);
  Sink s{env, sink, env->GetMethodID(sink_class, "onPiece", "([B)Z")};
  env->DeleteLocalRef(sink_class);
  if (s.on_piece == nullptr) return;  // NoSuchMethodError pending
  uint64_t generation = 0;
  pk_status st = chat ? pk_runner_start_chat(r, text.c_str(), config.c, &generation)
                      : pk_runner_start(r, text.c_str(), config.c, &generation);
  for (int done = 0; st == PK_STATUS_OK && !done;) {
    const char* piece = nullptr;
    size_t size = 0;
    st = pk_runner_next(r, generation, &piece, &size, &done);
    if (st == PK_STATUS_OK && !done && on_piece(piece, size, &s) != 0) pk_runner_stop(r);  // ends at the next pull
  }
  if (env->ExceptionCheck()) return;  // from the sink: Java sees it as the call's exception
  check(env, st);
}

jintArray runner_generate_ids(JNIEnv* env, jclass, jlong h, jintArray prompt_a, jint max_new, jfloat temperature,
                              jint top_k, jfloat top_p, jfloat min_p, jfloat penalty, jlong seed, jobjectArray stops) {
  pk_runner* r = runner_of(env, h);
  ConfigHolder config;
  if (r == nullptr || !make_config(env, max_new, temperature, top_k, top_p, min_p, penalty, seed, stops, &config))
    return nullptr;
  jsize n = env->GetArrayLength(prompt_a);
  std::vector<int32_t> prompt(static_cast<size_t>(n));
  if (n > 0) env->GetIntArrayRegion(prompt_a, 0, n, reinterpret_cast<jint*>(prompt.data()));
  std::vector<int32_t> out(static_cast<size_t>(max_new > 0 ? max_new : 0));
  size_t n_out = 0;
  if (env->ExceptionCheck() ||
      !check(env, pk_runner_generate_ids(r, prompt.data(), prompt.size(), config.c, out.data(), out.size(), &n_out)))
    return nullptr;
  jintArray result = env->NewIntArray(static_cast<jsize>(n_out));
  if (result != nullptr && n_out > 0)
    env->SetIntArrayRegion(result, 0, static_cast<jsize>(n_out), reinterpret_cast<const jint*>(out.data()));
  return result;
}

// ------------------------------------------------------------------ conversation --------------

void runner_set_system_prompt(JNIEnv* env, jclass, jlong h, jbyteArray prompt_b) {
  pk_runner* r = runner_of(env, h);
  std::string prompt;
  if (r == nullptr || (prompt_b != nullptr && !utf8_arg(env, prompt_b, &prompt))) return;
  check(env, pk_runner_set_system_prompt(r, prompt_b ? prompt.c_str() : nullptr));
}

void runner_reset(JNIEnv* env, jclass, jlong h) {
  if (pk_runner* r = runner_of(env, h)) check(env, pk_runner_reset(r));
}

// Any thread, while another runs a generation; Java keeps the handle alive meanwhile.
void runner_stop(JNIEnv*, jclass, jlong h) { pk_runner_stop(reinterpret_cast<pk_runner*>(static_cast<intptr_t>(h))); }

// [load_ms, ttft_ms, prefill_tok_s, decode_tok_s, prompt_tokens, generated_tokens]
jdoubleArray runner_stats(JNIEnv* env, jclass, jlong h) {
  pk_runner* r = runner_of(env, h);
  double v[6] = {0, 0, 0, 0, 0, 0};
  int32_t prompt = 0, generated = 0;
  if (r == nullptr || !check(env, pk_runner_stats(r, &v[0], &v[1], &v[2], &v[3], &prompt, &generated))) return nullptr;
  v[4] = prompt;
  v[5] = generated;
  jdoubleArray out = env->NewDoubleArray(6);
  if (out != nullptr) env->SetDoubleArrayRegion(out, 0, 6, v);
  return out;
}

jbyteArray runner_stop_reason(JNIEnv* env, jclass, jlong h) {
  pk_runner* r = runner_of(env, h);
  return r ? new_bytes(env, pk_runner_stop_reason(r)) : nullptr;
}

// [max_seq_len, vocab_size, position]
jintArray runner_info(JNIEnv* env, jclass, jlong h) {
  pk_runner* r = runner_of(env, h);
  if (r == nullptr) return nullptr;
  jint v[3] = {pk_runner_max_seq_len(r), pk_runner_vocab_size(r), pk_runner_position(r)};
  jintArray out = env->NewIntArray(3);
  if (out != nullptr) env->SetIntArrayRegion(out, 0, 3, v);
  return out;
}

// ------------------------------------------------------------------ tokenizer -----------------

jintArray runner_encode(JNIEnv* env, jclass, jlong h, jbyteArray text_b, jboolean add_bos) {
  pk_runner* r = runner_of(env, h);
  std::string text;
  if (r == nullptr || !utf8_arg(env, text_b, &text)) return nullptr;
  std::vector<int32_t> ids(text.size() + 8);  // a first guess; the call says how many are needed
  size_t n = 0;
  pk_status s = pk_runner_encode(r, text.c_str(), add_bos, ids.data(), ids.size(), &n);
  if (s == PK_STATUS_OUT_OF_RANGE && n > ids.size()) {
    ids.resize(n);
    s = pk_runner_encode(r, text.c_str(), add_bos, ids.data(), ids.size(), &n);
  }
  if (!check(env, s)) return nullptr;
  jintArray out = env->NewIntArray(static_cast<jsize>(n));
  if (out != nullptr && n > 0) env->SetIntArrayRegion(out, 0, static_cast<jsize>(n), reinterpret_cast<jint*>(ids.data()));
  return out;
}

jbyteArray runner_decode(JNIEnv* env, jclass, jlong h, jintArray ids_a) {
  pk_runner* r = runner_of(env, h);
  if (r == nullptr) return nullptr;
  jsize n_ids = env->GetArrayLength(ids_a);
  std::vector<int32_t> ids(static_cast<size_t>(n_ids));
  if (n_ids > 0) env->GetIntArrayRegion(ids_a, 0, n_ids, reinterpret_cast<jint*>(ids.data()));
  if (env->ExceptionCheck()) return nullptr;
  std::vector<char> text(16 * ids.size() + 16);
  size_t n = 0;
  pk_status s = pk_runner_decode(r, ids.data(), ids.size(), text.data(), text.size(), &n);
  if (s == PK_STATUS_OUT_OF_RANGE && n + 1 > text.size()) {
    text.resize(n + 1);
    s = pk_runner_decode(r, ids.data(), ids.size(), text.data(), text.size(), &n);
  }
  return check(env, s) ? new_bytes(env, text.data(), n) : nullptr;
}

#define NATIVE(name, sig, fn) {const_cast<char*>(name), const_cast<char*>(sig), reinterpret_cast<void*>(fn)}

const JNINativeMethod kRunnerNatives[] = {
    NATIVE("generationConfigCheck", "(IFIFFF)V", generation_config_check),
    NATIVE("runnerCreate", "([B[B)J", runner_create),
    NATIVE("runnerCreateFd", "(IJJ[B)J", runner_create_fd),
    NATIVE("runnerDestroy", "(J)V", runner_destroy),
    NATIVE("runnerSetNumThreads", "(JI)V", runner_set_num_threads),
    NATIVE("runnerGenerate", "(J[BZIFIFFFJ[[BLdev/pocket/PieceSink;)V", runner_generate),
    NATIVE("runnerGenerateIds", "(J[IIFIFFFJ[[B)[I", runner_generate_ids),
    NATIVE("runnerSetSystemPrompt", "(J[B)V", runner_set_system_prompt),
    NATIVE("runnerReset", "(J)V", runner_reset),
    NATIVE("runnerStop", "(J)V", runner_stop),
    NATIVE("runnerStats", "(J)[D", runner_stats),
    NATIVE("runnerStopReason", "(J)[B", runner_stop_reason),
    NATIVE("runnerInfo", "(J)[I", runner_info),
    NATIVE("runnerEncode", "(J[BZ)[I", runner_encode),
    NATIVE("runnerDecode", "(J[I)[B", runner_decode),
};

#undef NATIVE

}  // namespace

namespace pocket_jni {

bool register_llm_natives(JNIEnv* env, jclass cls) {
  jint n = static_cast<jint>(sizeof kRunnerNatives / sizeof kRunnerNatives[0]);
  return env->RegisterNatives(cls, kRunnerNatives, n) == JNI_OK;
}

}  // namespace pocket_jni
