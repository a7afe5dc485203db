package dev.pocket;

import androidx.annotation.NonNull;

/** Statistics of a generation (see {@code pk_runner_stats}). */
public final class LlmStats {
  private final double loadMs;
  private final double ttftMs;
  private final double prefillTokensPerSecond;
  private final double decodeTokensPerSecond;
  private final int promptTokens;
  private final int generatedTokens;
  private final String stopReason;

  LlmStats(double[] v, String stopReason) {
    this.loadMs = v[0];
    this.ttftMs = v[1];
    this.prefillTokensPerSecond = v[2];
    this.decodeTokensPerSecond = v[3];
    this.promptTokens = (int) v[4];
    this.generatedTokens = (int) v[5];
    this.stopReason = stopReason;
  }

  /** Time the model took to load. */
  public double getLoadMs() {
    return loadMs;
  }

  /** Time to the first token, prefill included. */
  public double getTtftMs() {
    return ttftMs;
  }

  public double getPrefillTokensPerSecond() {
    return prefillTokensPerSecond;
  }

  public double getDecodeTokensPerSecond() {
    return decodeTokensPerSecond;
  }

  public int getPromptTokens() {
    return promptTokens;
  }

  public int getGeneratedTokens() {
    return generatedTokens;
  }

  /**
   * Why generation ended: "eos", "stop_string", "max_new_tokens", "context_full", "cancelled"
   * (stop() or an exception in the callback), or "" before any generation.
   */
  public @NonNull String getStopReason() {
    return stopReason;
  }

  @Override
  public @NonNull String toString() {
    return String.format(java.util.Locale.ROOT,
        "LlmStats(prompt %d tokens, generated %d, ttft %.1f ms, prefill %.1f tok/s, decode %.1f tok/s, load %.1f ms, stop %s)",
        promptTokens, generatedTokens, ttftMs, prefillTokensPerSecond, decodeTokensPerSecond, loadMs, stopReason);
  }
}
