package dev.pocket;

import java.nio.ByteBuffer;

/**
 * The natives of libpocket_jni (bindings/java/jni), bound by RegisterNatives in JNI_OnLoad, and
 * the library loader.
 *
 * <p>Loading, in order: the system property {@code pocket.jni.library} (a path to
 * libpocket_jni.so, loaded with {@link System#load}); the libraries inside this jar, when it is
 * the desktop artifact {@code dev.pocket:pocket-java} (resources {@code
 * dev/pocket/native/<os>-<arch>/}, copied once into a temporary folder); otherwise {@code
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
      } else if (!loadFromJar()) {
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

  /** The jar's folder of native libraries for this OS and CPU, e.g. "linux-x86_64". */
  static String platformFolder() {
    String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(java.util.Locale.ROOT);
    if (arch.equals("amd64")) arch = "x86_64";
    if (arch.equals("arm64")) arch = "aarch64";
    return (os.startsWith("mac") ? "macos" : os.startsWith("linux") ? "linux" : os) + "-" + arch;
  }

  /**
   * Loads libpocket_jni from this jar's resources (the pocket-java artifact). False when the jar
   * carries no libraries for this platform (the AAR's classes.jar, a plain build).
   */
  private static boolean loadFromJar() {
    String folder = "native/" + platformFolder() + "/";
    String[] names = {"libpocket.so", "libpocket_jni.so"};
    if (NativeLib.class.getResource(folder + names[1]) == null) return false;
    try {
      java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("pocket-jni");
      dir.toFile().deleteOnExit();
      for (String name : names) {
        java.nio.file.Path target = dir.resolve(name);
        try (java.io.InputStream in = NativeLib.class.getResourceAsStream(folder + name)) {
          if (in == null) throw new UnsatisfiedLinkError("pocket-java jar lacks " + folder + name);
          java.nio.file.Files.copy(in, target);
        }
        target.toFile().deleteOnExit();
      }
      System.load(dir.resolve(names[1]).toString());
      return true;
    } catch (java.io.IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("cannot unpack the native libraries of the "
          + "pocket-java jar (" + folder + "): " + e);
      error.initCause(e);
      throw error;
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
  static native long moduleLoadFd(int fd, long offset, long length, int mode);
  static native boolean moduleIsMapped(long module);
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
  /** pk_generation_config's setters on these values; IllegalArgumentException for a refused one. */
  static native void generationConfigCheck(int maxNewTokens, float temperature, int topK, float topP, float minP,
      float repetitionPenalty);
  static native long runnerCreate(byte[] model, byte[] tokenizer);
  static native long runnerCreateFd(int fd, long offset, long length, byte[] tokenizer);
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
