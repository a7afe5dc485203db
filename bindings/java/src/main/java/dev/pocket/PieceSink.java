package dev.pocket;

/**
 * What the JNI glue calls with each generated piece (UTF-8 bytes). It decodes the piece and
 * calls the user's callback; whatever the callback throws is kept for the caller to rethrow and
 * stops the generation (onPiece answers false).
 */
final class PieceSink {
  private final LlmCallback callback;
  private Throwable error;

  PieceSink(LlmCallback callback) {
    this.callback = callback;
  }

  /** Called from native code; true = go on. */
  boolean onPiece(byte[] utf8) {
    if (error != null) return false;
    try {
      callback.onToken(Args.string(utf8));
      return true;
    } catch (Throwable t) {
      error = t;
      return false;
    }
  }

  /** Rethrows what the callback threw, unchanged (checked exceptions from Kotlin included). */
  void rethrowIfFailed() {
    if (error != null) PieceSink.<RuntimeException>sneakyThrow(error);
  }

  /** The same, with {@code other} (what the native call then threw) attached as suppressed. */
  void rethrowIfFailed(Throwable other) {
    if (error != null && error != other) error.addSuppressed(other);
    rethrowIfFailed();
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
    throw (T) t;
  }
}
