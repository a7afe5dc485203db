package dev.pocket;

import androidx.annotation.NonNull;

/**
 * Receives a generation's text as it is produced. Called on the thread that called
 * {@link LlmModule#generate} or {@link LlmModule#chat}.
 *
 * <p>An exception thrown here stops the generation and is rethrown by the generate/chat call.
 * To end a generation early without an exception, call {@link LlmModule#stop()} (here or from
 * any thread). Other LlmModule calls from inside a callback throw IllegalStateException.
 */
public interface LlmCallback {
  /** A piece of generated text: one or more whole characters, never a split one. */
  void onToken(@NonNull String piece);

  /** Statistics of the finished generation (not called when it failed). */
  default void onStats(@NonNull LlmStats stats) {}
}
