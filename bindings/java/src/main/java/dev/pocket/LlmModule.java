package dev.pocket;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;

/**
 * A chat model exported by {@code pocket llm export}, with its tokenizer, sampler and KV cache
 * (pocket_llm.h's runner).
 *
 * <pre>{@code
 * try (LlmModule llm = new LlmModule("smol.pocket")) {          // tokenizer embedded in the file
 *   GenerationConfig config = GenerationConfig.builder().maxNewTokens(64).build();
 *   llm.generate("Once upon a time", config, piece -> System.out.print(piece));
 *   llm.chat("Hi!", config, piece -> System.out.print(piece));  // keeps the conversation
 * }
 * }</pre>
 *
 * <p>Threads (pocket_llm.h's contract): one generation runs at a time. generate, chat,
 * generateIds, reset and setSystemPrompt called while another of them runs, from another thread
 * or from inside an {@link LlmCallback}, throw a {@link PocketException} with status
 * {@link PocketException#BUSY} at once instead of waiting (a generation can take long) and change
 * nothing. Any thread may call the others at any time, also during a generation: {@link #stop()},
 * {@link #close()}, getStats, getPosition and the other getters, setNumThreads, encode and decode.
 * close() during a generation stops it and waits for it to return (from inside the callback it
 * returns at once; the model is freed when the generation returns). Close the module to free the
 * model (the GC does not); use after close throws IllegalStateException.
 */
public final class LlmModule implements AutoCloseable {
  private final Object lock = new Object();
  private long handle;            // guarded by lock; 0 once destroyed
  private Thread generating;      // the thread inside generate/chat/reset/..., guarded by lock
  private int calls;              // threads inside any native call, guarded by lock
  private boolean closeRequested; // close() came during a call; the last call destroys on its way out

  /** Loads a model whose tokenizer is embedded in the .pocket file. */
  public LlmModule(@NonNull String modelPath) {
    this(modelPath, null);
  }

  /**
   * Loads a model and its tokenizer: tokenizer.json, tiktoken or llama2.c tokenizer.bin at
   * {@code tokenizerPath}, or the one embedded in the .pocket file when null.
   *
   * @throws PocketException NOT_FOUND (no file, no embedded tokenizer), INVALID_PROGRAM, or
   *     INVALID_ARGUMENT for a program that is not an LLM or a tokenizer that does not fit it
   */
  public LlmModule(@NonNull String modelPath, @Nullable String tokenizerPath) {
    byte[] model = Args.utf8(modelPath, "modelPath");
    byte[] tokenizer = tokenizerPath == null ? null : Args.utf8(tokenizerPath, "tokenizerPath");
    NativeLib.ensureLoaded();
    handle = NativeLib.runnerCreate(model, tokenizer);
  }

  /**
   * Loads the model stored in {@code length} bytes of the open file {@code fd} at {@code offset}
   * (an APK asset through AssetFileDescriptor, a stored zip entry), mapped in place when the offset
   * is a multiple of 16, as {@link Module#load(int, long, long)} does; the descriptor is borrowed for
   * the call. {@code tokenizerPath}: as above, null for the tokenizer embedded in the program.
   *
   * @throws PocketException as {@link Module#load(int, long, long)} and {@link #LlmModule(String, String)}
   */
  public LlmModule(int fd, long offset, long length, @Nullable String tokenizerPath) {
    Args.region(offset, length);
    byte[] tokenizer = tokenizerPath == null ? null : Args.utf8(tokenizerPath, "tokenizerPath");
    NativeLib.ensureLoaded();
    handle = NativeLib.runnerCreateFd(fd, offset, length, tokenizer);
  }

  // ------------------------------------------------------------------ generation

  /** {@link #generate(String, GenerationConfig, LlmCallback)} with {@link GenerationConfig#defaults()}. */
  public @NonNull LlmStats generate(@NonNull String prompt, @NonNull LlmCallback callback) {
    return generate(prompt, GenerationConfig.defaults(), callback);
  }

  /**
   * Streams the continuation of {@code prompt} (BOS added) to {@code callback}, then calls its
   * onStats. Each call starts a new text (the conversation is reset).
   *
   * @return the statistics also given to onStats
   * @throws PocketException OUT_OF_RANGE for a prompt longer than the context, ...
   */
  public @NonNull LlmStats generate(@NonNull String prompt, @NonNull GenerationConfig config,
      @NonNull LlmCallback callback) {
    return stream(Args.utf8(prompt, "prompt"), false, config, callback);
  }

  /**
   * One chat turn: {@code message} is formatted with the model's chat template (with the system
   * prompt on the first turn) and the reply streamed to {@code callback}. Earlier turns stay in
   * the KV cache until {@link #reset()}.
   */
  public @NonNull LlmStats chat(@NonNull String message, @NonNull GenerationConfig config,
      @NonNull LlmCallback callback) {
    return stream(Args.utf8(message, "message"), true, config, callback);
  }

  /** {@link #chat(String, GenerationConfig, LlmCallback)} with {@link GenerationConfig#defaults()}. */
  public @NonNull LlmStats chat(@NonNull String message, @NonNull LlmCallback callback) {
    return chat(message, GenerationConfig.defaults(), callback);
  }

  private LlmStats stream(byte[] text, boolean chat, GenerationConfig config, LlmCallback callback) {
    Args.notNull(config, "config");
    Args.notNull(callback, "callback");
    byte[][] stops = config.stopStringsUtf8();
    PieceSink sink = new PieceSink(callback);
    LlmStats stats;
    long h = enter(true);
    try {
      try {
        NativeLib.runnerGenerate(h, text, chat, config.getMaxNewTokens(), config.getTemperature(),
            config.getTopK(), config.getTopP(), config.getMinP(), config.getRepetitionPenalty(),
            config.getSeed(), stops, sink);
      } catch (RuntimeException | Error e) {
        sink.rethrowIfFailed(e);  // the callback's exception first; it caused the rest
        throw e;
      }
      sink.rethrowIfFailed();
      stats = readStats(h);
    } finally {
      exit(true);
    }
    callback.onStats(stats);
    return stats;
  }

  /**
   * Greedy or sampled continuation of token ids (no BOS added), at most
   * {@code config.getMaxNewTokens()} of them. Resets the conversation.
   */
  public @NonNull int[] generateIds(@NonNull int[] prompt, @NonNull GenerationConfig config) {
    Args.notNull(prompt, "prompt");
    Args.notNull(config, "config");
    byte[][] stops = config.stopStringsUtf8();
    long h = enter(true);
    try {
      return NativeLib.runnerGenerateIds(h, prompt, config.getMaxNewTokens(), config.getTemperature(),
          config.getTopK(), config.getTopP(), config.getMinP(), config.getRepetitionPenalty(),
          config.getSeed(), stops);
    } finally {
      exit(true);
    }
  }

  /**
   * Ends a running generation after the current token; its call returns normally with stop
   * reason "cancelled". Any thread, also from inside a callback. Without a running generation
   * it does nothing (the next generation is not affected).
   */
  public void stop() {
    synchronized (lock) {
      if (handle != 0) NativeLib.runnerStop(handle);
    }
  }

  // ------------------------------------------------------------------ conversation

  /** System prompt of the next first chat turn; null or "" for none. @throws PocketException BUSY during a generation */
  public void setSystemPrompt(@Nullable String systemPrompt) {
    byte[] p = systemPrompt == null ? null : Args.utf8(systemPrompt, "systemPrompt");
    long h = enter(true);
    try {
      NativeLib.runnerSetSystemPrompt(h, p);
    } finally {
      exit(true);
    }
  }

  /** Forgets the conversation (the KV cache). @throws PocketException BUSY during a generation */
  public void reset() {
    long h = enter(true);
    try {
      NativeLib.runnerReset(h);
    } finally {
      exit(true);
    }
  }

  // ------------------------------------------------------------------ tokenizer

  /** Token ids of {@code text}, without BOS. */
  public @NonNull int[] encode(@NonNull String text) {
    return encode(text, false);
  }

  /** Token ids of {@code text}, with BOS first when {@code addBos}. */
  public @NonNull int[] encode(@NonNull String text, boolean addBos) {
    byte[] t = Args.utf8(text, "text");
    long h = enter(false);
    try {
      return NativeLib.runnerEncode(h, t, addBos);
    } finally {
      exit(false);
    }
  }

  /** The text of {@code ids}. @throws PocketException for an id outside the vocabulary */
  public @NonNull String decode(@NonNull int[] ids) {
    Args.notNull(ids, "ids");
    long h = enter(false);
    try {
      return Args.string(NativeLib.runnerDecode(h, ids));
    } finally {
      exit(false);
    }
  }

  // ------------------------------------------------------------------ state

  /** Statistics of the last generation. */
  public @NonNull LlmStats getStats() {
    long h = enter(false);
    try {
      return readStats(h);
    } finally {
      exit(false);
    }
  }

  /** Context length: prompt and generated tokens of a conversation together. */
  public int getMaxSeqLen() {
    return info(0);
  }

  public int getVocabSize() {
    return info(1);
  }

  /** Tokens in the KV cache (the conversation so far). */
  public int getPosition() {
    return info(2);
  }

  /** Threads kernels may use: 1 = the calling thread only, 0 = the runtime's default. */
  public void setNumThreads(int numThreads) {
    if (numThreads < 0) throw new IllegalArgumentException("numThreads must be >= 0, got " + numThreads);
    long h = enter(false);
    try {
      NativeLib.runnerSetNumThreads(h, numThreads);
    } finally {
      exit(false);
    }
  }

  public boolean isClosed() {
    synchronized (lock) {
      return handle == 0 || closeRequested;
    }
  }

  /**
   * Frees the model. During a generation on another thread: stops it and waits until it returns.
   * From inside a callback: stops the generation, which frees the model when it returns. Closing
   * twice is fine.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (handle == 0 || closeRequested) return;
      if (calls == 0) {
        destroy();
        return;
      }
      closeRequested = true;
      NativeLib.runnerStop(handle);
      if (generating == Thread.currentThread()) return;
      boolean interrupted = false;
      while (handle != 0) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) Thread.currentThread().interrupt();
    }
  }

  private int info(int i) {
    long h = enter(false);
    try {
      return NativeLib.runnerInfo(h)[i];
    } finally {
      exit(false);
    }
  }

  private static LlmStats readStats(long h) {
    return new LlmStats(NativeLib.runnerStats(h), Args.string(NativeLib.runnerStopReason(h)));
  }

  /**
   * Counts a native call in (close() waits for it) and returns the handle. A generation
   * (generate, chat, generateIds, reset, setSystemPrompt) runs alone: one that meets another is
   * refused with BUSY, as pk_runner_generate is.
   */
  private long enter(boolean generation) {
    synchronized (lock) {
      if (handle == 0 || closeRequested) throw new IllegalStateException("LlmModule is closed");
      if (generation && generating != null) {
        throw new PocketException(PocketException.BUSY, "BUSY", generating == Thread.currentThread()
            ? "the runner is generating: an LlmCallback cannot start a generation, reset or set the system prompt"
            : "the runner is generating on another thread: one generation at a time (stop() ends it)");
      }
      if (generation) generating = Thread.currentThread();
      ++calls;
      return handle;
    }
  }

  private void exit(boolean generation) {
    synchronized (lock) {
      if (generation) generating = null;
      if (--calls == 0 && closeRequested) destroy();
      lock.notifyAll();
    }
  }

  private void destroy() {
    long h = handle;
    handle = 0;
    NativeLib.runnerDestroy(h);
  }
}
