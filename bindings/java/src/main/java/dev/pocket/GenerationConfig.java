package dev.pocket;

import androidx.annotation.NonNull;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * How {@link LlmModule} generates: length, sampling and stop strings. Immutable; each builder
 * setter has the runtime check its value (pocket_llm.h's pk_generation_config setters, the one
 * check every binding uses), so a bad value fails here with IllegalArgumentException naming it
 * rather than in the middle of a generation.
 *
 * <pre>{@code
 * GenerationConfig c = GenerationConfig.builder().maxNewTokens(64).temperature(0.7f).topP(0.9f).build();
 * }</pre>
 *
 * Kotlin (bindings/java/kotlin): {@code GenerationConfig(maxNewTokens = 64, temperature = 0.7f)}.
 *
 * <p>Defaults match pocket_llm.h: 256 new tokens, greedy (temperature 0), no top-k/top-p/min-p,
 * no repetition penalty, seed 0, no stop strings.
 */
public final class GenerationConfig {
  private static final GenerationConfig DEFAULTS = new Builder().build();

  private final int maxNewTokens;
  private final float temperature;
  private final int topK;
  private final float topP;
  private final float minP;
  private final float repetitionPenalty;
  private final long seed;
  private final List<String> stopStrings;

  private GenerationConfig(Builder b) {
    this.maxNewTokens = b.maxNewTokens;
    this.temperature = b.temperature;
    this.topK = b.topK;
    this.topP = b.topP;
    this.minP = b.minP;
    this.repetitionPenalty = b.repetitionPenalty;
    this.seed = b.seed;
    this.stopStrings = Collections.unmodifiableList(new ArrayList<>(b.stopStrings));
  }

  /** The defaults. */
  public static @NonNull GenerationConfig defaults() {
    return DEFAULTS;
  }

  public static @NonNull Builder builder() {
    return new Builder();
  }

  /** A builder starting from this config's values. */
  public @NonNull Builder toBuilder() {
    Builder b = new Builder();
    b.maxNewTokens = maxNewTokens;
    b.temperature = temperature;
    b.topK = topK;
    b.topP = topP;
    b.minP = minP;
    b.repetitionPenalty = repetitionPenalty;
    b.seed = seed;
    b.stopStrings.addAll(stopStrings);
    return b;
  }

  public int getMaxNewTokens() {
    return maxNewTokens;
  }

  public float getTemperature() {
    return temperature;
  }

  public int getTopK() {
    return topK;
  }

  public float getTopP() {
    return topP;
  }

  public float getMinP() {
    return minP;
  }

  public float getRepetitionPenalty() {
    return repetitionPenalty;
  }

  public long getSeed() {
    return seed;
  }

  /** Unmodifiable. */
  public @NonNull List<String> getStopStrings() {
    return stopStrings;
  }

  byte[][] stopStringsUtf8() {
    byte[][] out = new byte[stopStrings.size()][];
    for (int i = 0; i < out.length; ++i) out[i] = Args.utf8(stopStrings.get(i), "stop string");
    return out;
  }

  @Override
  public @NonNull String toString() {
    return "GenerationConfig(maxNewTokens=" + maxNewTokens + ", temperature=" + temperature + ", topK=" + topK
        + ", topP=" + topP + ", minP=" + minP + ", repetitionPenalty=" + repetitionPenalty + ", seed=" + seed
        + ", stopStrings=" + stopStrings + ")";
  }

  /** Builds a {@link GenerationConfig}; each setter checks its value. */
  public static final class Builder {
    private int maxNewTokens = 256;
    private float temperature = 0f;
    private int topK = 0;
    private float topP = 1f;
    private float minP = 0f;
    private float repetitionPenalty = 1f;
    private long seed = 0;
    private final List<String> stopStrings = new ArrayList<>();

    private Builder() {}

    /** Most tokens to generate, >= 0. */
    public @NonNull Builder maxNewTokens(int n) {
      check(n, temperature, topK, topP, minP, repetitionPenalty);
      maxNewTokens = n;
      return this;
    }

    /** 0 = greedy; otherwise the softmax temperature, finite and > 0. */
    public @NonNull Builder temperature(float t) {
      check(maxNewTokens, t, topK, topP, minP, repetitionPenalty);
      temperature = t;
      return this;
    }

    /** Keep the k most likely tokens; 0 = off. */
    public @NonNull Builder topK(int k) {
      check(maxNewTokens, temperature, k, topP, minP, repetitionPenalty);
      topK = k;
      return this;
    }

    /** Nucleus sampling mass in (0, 1]; 1 = off. */
    public @NonNull Builder topP(float p) {
      check(maxNewTokens, temperature, topK, p, minP, repetitionPenalty);
      topP = p;
      return this;
    }

    /** Drop tokens below minP times the best one's probability, in [0, 1]; 0 = off. */
    public @NonNull Builder minP(float p) {
      check(maxNewTokens, temperature, topK, topP, p, repetitionPenalty);
      minP = p;
      return this;
    }

    /** > 1 discourages recently generated tokens; 1 = off. Finite and > 0. */
    public @NonNull Builder repetitionPenalty(float penalty) {
      check(maxNewTokens, temperature, topK, topP, minP, penalty);
      repetitionPenalty = penalty;
      return this;
    }

    /** Sampling seed (an unsigned 64-bit value in the runtime). */
    public @NonNull Builder seed(long s) {
      seed = s;
      return this;
    }

    /** Generation ends before {@code stop} appears in the text. Non-empty, no NUL. */
    public @NonNull Builder addStopString(@NonNull String stop) {
      Args.utf8(stop, "stop string");
      if (stop.isEmpty()) throw new IllegalArgumentException("stop string is empty");
      stopStrings.add(stop);
      return this;
    }

    /** Replaces the stop strings. */
    public @NonNull Builder stopStrings(@NonNull List<String> stops) {
      Args.notNull(stops, "stopStrings");
      List<String> old = new ArrayList<>(stopStrings);
      stopStrings.clear();
      try {
        for (String s : stops) addStopString(s);
      } catch (IllegalArgumentException e) {
        stopStrings.clear();
        stopStrings.addAll(old);
        throw e;
      }
      return this;
    }

    /** Replaces the stop strings. */
    public @NonNull Builder stopStrings(@NonNull String... stops) {
      return stopStrings(Arrays.asList(Args.notNull(stops, "stopStrings")));
    }

    public @NonNull GenerationConfig build() {
      return new GenerationConfig(this);
    }

    /** The runtime's check of these values (the others are valid already, so it names the new one). */
    private static void check(int maxNewTokens, float temperature, int topK, float topP, float minP, float penalty) {
      NativeLib.ensureLoaded();
      NativeLib.generationConfigCheck(maxNewTokens, temperature, topK, topP, minP, penalty);
    }
  }
}
