package dev.pocket;

import java.nio.ByteBuffer;

/**
 * The natives of libpocket_jni (bindings/java/jni), bound by RegisterNatives in JNI_OnLoad, and
 * the library loader.
 *
 * <p>Loading, in order: the system property {@code pocket.jni.library} (a path to
 * libpocket_jni.so, loaded with {@link System#load}); otherwise {@code
 * System.loadLibrary("pocket_jni")}, which searches {@code java.library.path} on a desktop JVM
 * and the APK's native libraries on Android. libpocket_jni finds libpocket next to itself.
 *
 * <p>Handles are {@code pk_module*} / {@code pk_runner*} in a long; the API classes never pass a
 * closed (0) handle. Strings are UTF-8 byte arrays (see jni_util.h).
 */
final class NativeLib {
  /** The pocket.h API version (PK_API_VERSION) this jar is written against. */
  static final int API_VERSION = 1;

  private static final Throwable LOAD_ERROR = load();

  private NativeLib() {}

  private static Throwable load() {
    String path = System.getProperty("pocket.jni.library");
    try {
      if (path != null && !path.isEmpty()) {
        System.load(path);
      } else {
        System.loadLibrary("pocket_jni");
      }
      int version = apiVersion();
      if (version != API_VERSION) {
        return new UnsatisfiedLinkError("libpocket has C API version " + version + "; this jar needs "
            + API_VERSION);
      }
      return null;
    } catch (UnsatisfiedLinkError e) {
      String where = path != null && !path.isEmpty() ? "from " + path + " (pocket.jni.library)"
          : "from java.library.path (" + System.getProperty("java.library.path") + ")";
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("cannot load libpocket_jni " + where
          + ": " + e.getMessage()
          + ". Set -Dpocket.jni.library=/path/to/libpocket_jni.so or add its folder to java.library.path.");
      error.initCause(e);
      return error;
    }
  }

  /** Throws the loading error, if any, each time it is called (not just the first). */
  static void ensureLoaded() {
    if (LOAD_ERROR instanceof UnsatisfiedLinkError) {
      UnsatisfiedLinkError copy = new UnsatisfiedLinkError(LOAD_ERROR.getMessage());
      copy.initCause(LOAD_ERROR.getCause());
      throw copy;
    }
  }

  static native int apiVersion();

  // ---- modules (pocket.h)
  static native long moduleLoadFile(byte[] path, int mode);
  static native long moduleLoadBytes(byte[] program);
  static native long moduleLoadDirect(ByteBuffer program);
  static native void moduleDestroy(long module);
  static native void moduleSetNumThreads(long module, int n);
  static native byte[][] moduleMethodNames(long module);
  /** Keys and values interleaved. */
  static native byte[][] moduleMetadata(long module);
  static native int moduleIoCount(long module, byte[] method, boolean input);
  /** {dtype, ndim, min_shape..., max_shape...}. */
  static native long[] moduleIoInfo(long module, byte[] method, int index, boolean input);
  /** Inputs are direct buffers borrowed for the call; outputs hold copies. */
  static native Tensor[] moduleExecute(long module, byte[] method, ByteBuffer[] data, int[] dtypes,
      long[][] shapes);

  // ---- LLM runner (pocket_llm.h)
  static native long runnerCreate(byte[] model, byte[] tokenizer);
  static native void runnerDestroy(long runner);
  static native void runnerSetNumThreads(long runner, int n);
  static native void runnerGenerate(long runner, byte[] text, boolean chat, int maxNewTokens,
      float temperature, int topK, float topP, float minP, float repetitionPenalty, long seed,
      byte[][] stopStrings, PieceSink sink);
  static native int[] runnerGenerateIds(long runner, int[] prompt, int maxNewTokens,
      float temperature, int topK, float topP, float minP, float repetitionPenalty, long seed,
      byte[][] stopStrings);
  static native void runnerSetSystemPrompt(long runner, byte[] prompt);
  static native void runnerReset(long runner);
  static native void runnerStop(long runner);
  /** {load_ms, ttft_ms, prefill_tok_s, decode_tok_s, prompt_tokens, generated_tokens}. */
  static native double[] runnerStats(long runner);
  static native byte[] runnerStopReason(long runner);
  /** {max_seq_len, vocab_size, position}. */
  static native int[] runnerInfo(long runner);
  static native int[] runnerEncode(long runner, byte[] text, boolean addBos);
  static native byte[] runnerDecode(long runner, int[] ids);
}
