package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** LlmModule on the golden tiny LLM: token-for-token equal to eager PyTorch, and safe misuse. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LlmModuleTest {
  private Golden.Greedy golden;
  private LlmModule llm;
  private GenerationConfig greedy;
  private ExecutorService pool;

  @BeforeAll
  void load() throws IOException {
    golden = Golden.greedy();
    llm = new LlmModule(Golden.llmModel(), Golden.llmTokenizer());
    greedy = GenerationConfig.builder().maxNewTokens(golden.greedyIds.length).build();
    pool = Executors.newCachedThreadPool();
  }

  @AfterAll
  void close() {
    llm.close();
    pool.shutdownNow();
  }

  /** Collects pieces and counts onStats calls. */
  static class Collector implements LlmCallback {
    final StringBuilder text = new StringBuilder();
    final List<String> pieces = new ArrayList<>();
    final List<LlmStats> stats = new ArrayList<>();

    @Override
    public void onToken(String piece) {
      pieces.add(piece);
      text.append(piece);
    }

    @Override
    public void onStats(LlmStats s) {
      stats.add(s);
    }
  }

  @Test
  void greedyIdsEqualPyTorch() {
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy));
    // Again: each generation starts fresh.
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy));
    // top-k 1 with a temperature is greedy too.
    GenerationConfig topK1 = greedy.toBuilder().temperature(0.8f).topK(1).seed(3).build();
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, topK1));
    assertEquals(0, llm.generateIds(golden.promptIds, greedy.toBuilder().maxNewTokens(0).build()).length);
  }

  @Test
  void samplingIsSeeded() {
    GenerationConfig c = GenerationConfig.builder().maxNewTokens(12).temperature(1.5f).topP(0.95f).minP(0.01f)
        .repetitionPenalty(1.1f).seed(42).build();
    int[] a = llm.generateIds(golden.promptIds, c);
    assertArrayEquals(a, llm.generateIds(golden.promptIds, c));
    int[] b = llm.generateIds(golden.promptIds, c.toBuilder().seed(43).build());
    int[] g = llm.generateIds(golden.promptIds, greedy);
    assertTrue(!java.util.Arrays.equals(a, b) || !java.util.Arrays.equals(a, java.util.Arrays.copyOf(g, a.length)),
        "different seeds or greedy should differ somewhere");
  }

  @Test
  void tokenizerRoundTrips() {
    assertArrayEquals(golden.promptIds, llm.encode(golden.promptText));
    assertArrayEquals(golden.promptIds, llm.encode(golden.promptText, false));
    int[] withBos = llm.encode(golden.promptText, true);
    assertTrue(withBos.length >= golden.promptIds.length);
    String unicode = "naïve café — 東京 🙂";
    assertEquals(unicode, llm.decode(llm.encode(unicode)));
    assertEquals("", llm.decode(new int[0]));
    assertEquals(0, llm.encode("").length);
  }

  @Test
  void streamedTextEqualsDecodedIds() {
    Collector c = new Collector();
    LlmStats stats = llm.generate(golden.promptText, greedy, c);
    assertEquals(llm.decode(golden.greedyIds), c.text.toString());
    assertFalse(c.pieces.isEmpty());
    assertEquals(1, c.stats.size());
    assertSame(stats, c.stats.get(0));
    assertEquals("max_new_tokens", stats.getStopReason());
    assertEquals(golden.greedyIds.length, stats.getGeneratedTokens());
    assertTrue(stats.getPromptTokens() >= golden.promptIds.length);
    assertTrue(stats.getTtftMs() > 0 && stats.getDecodeTokensPerSecond() > 0, stats.toString());
    assertTrue(stats.getLoadMs() > 0);
    assertEquals(stats.getGeneratedTokens(), llm.getStats().getGeneratedTokens());
    assertEquals("max_new_tokens", llm.getStats().getStopReason());
  }

  @Test
  void stopStringsEndTheText() {
    // The random model's text is partly invalid UTF-8; take two ASCII letters from its middle.
    String full = llm.decode(golden.greedyIds);
    int at = full.length() / 3;
    while (!(isAsciiLetter(full.charAt(at)) && isAsciiLetter(full.charAt(at + 1)))) ++at;
    String stop = full.substring(at, at + 2);
    Collector c = new Collector();
    LlmStats stats = llm.generate(golden.promptText, greedy.toBuilder().addStopString(stop).build(), c);
    assertEquals("stop_string", stats.getStopReason());
    assertEquals(full.substring(0, full.indexOf(stop)), c.text.toString());
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  @Test
  void stopFromAnotherThread() throws Exception {
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch stopped = new CountDownLatch(1);
    Collector c = new Collector() {
      @Override
      public void onToken(String piece) {
        super.onToken(piece);
        first.countDown();
        try {
          stopped.await(30, TimeUnit.SECONDS);  // hold the generation until stop() was called
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      }
    };
    Future<?> stopper = pool.submit(() -> {
      first.await();
      llm.stop();
      stopped.countDown();
      return null;
    });
    LlmStats stats = llm.generate(golden.promptText, greedy.toBuilder().maxNewTokens(100).build(), c);
    stopper.get(30, TimeUnit.SECONDS);
    assertEquals("cancelled", stats.getStopReason());
    assertEquals(1, c.pieces.size());
    assertEquals(1, c.stats.size());
    // A stop() without a running generation does not affect the next one.
    llm.stop();
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy));
  }

  @Test
  void stopFromTheCallback() {
    List<String> pieces = new ArrayList<>();
    LlmStats stats = llm.generate(golden.promptText, greedy, piece -> {
      pieces.add(piece);
      if (pieces.size() == 3) llm.stop();
    });
    assertEquals("cancelled", stats.getStopReason());
    assertEquals(3, pieces.size());
  }

  @Test
  void callbackExceptionStopsAndIsRethrown() {
    IllegalStateException boom = new IllegalStateException("boom");
    int[] calls = {0};
    IllegalStateException thrown = assertThrows(IllegalStateException.class,
        () -> llm.generate(golden.promptText, greedy, piece -> {
          ++calls[0];
          throw boom;
        }));
    assertSame(boom, thrown);
    assertEquals(1, calls[0]);
    assertEquals("cancelled", llm.getStats().getStopReason());
    // onStats throwing is rethrown too.
    RuntimeException statsBoom = new RuntimeException("stats");
    assertSame(statsBoom, assertThrows(RuntimeException.class, () -> llm.generate(golden.promptText, greedy,
        new LlmCallback() {
          @Override
          public void onToken(String piece) {}

          @Override
          public void onStats(LlmStats stats) {
            throw statsBoom;
          }
        })));
    // A generation started from inside a callback is refused with BUSY (pocket_llm.h), and the
    // refusal surfaces as the exception; the tokenizer and the getters are fine there.
    PocketException reentry = assertThrows(PocketException.class,
        () -> llm.generate(golden.promptText, greedy, piece -> {
          assertArrayEquals(golden.promptIds, llm.encode(golden.promptText));
          assertTrue(llm.getPosition() > 0);
          llm.generateIds(golden.promptIds, greedy);
        }));
    assertEquals(PocketException.BUSY, reentry.getStatus());
    assertTrue(reentry.getMessage().contains("LlmCallback"), reentry.getMessage());
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy), "still usable");
  }

  @Test
  void oneCallAtATime() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<LlmStats> running = pool.submit(() -> llm.generate(golden.promptText, greedy, piece -> {
      inside.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        throw new RuntimeException(e);
      }
    }));
    assertTrue(inside.await(30, TimeUnit.SECONDS));
    // Generations, reset and the system prompt are refused with BUSY, as the C API does ...
    for (Runnable call : new Runnable[] {() -> llm.generateIds(golden.promptIds, greedy),
             () -> llm.generate("x", greedy, piece -> {}), () -> llm.chat("x", greedy, piece -> {}), llm::reset,
             () -> llm.setSystemPrompt("x")}) {
      PocketException busy = assertThrows(PocketException.class, call::run);
      assertEquals(PocketException.BUSY, busy.getStatus());
      assertEquals("BUSY", busy.getStatusName());
    }
    // ... while the tokenizer, the getters and setNumThreads work during the generation.
    assertArrayEquals(golden.promptIds, llm.encode(golden.promptText));
    assertTrue(llm.getPosition() > 0);
    assertEquals("", llm.getStats().getStopReason(), "no stop reason while a generation runs");
    llm.setNumThreads(1);
    release.countDown();
    assertEquals("max_new_tokens", running.get(30, TimeUnit.SECONDS).getStopReason());
    llm.setNumThreads(0);
  }

  @Test
  void manyThreadsGetGoldenOrBusy() throws Exception {
    // 3 threads x 4 calls on one LlmModule: each call returns the golden ids or fails with BUSY;
    // a fourth thread reads the getters and the tokenizer meanwhile.
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy));
    CountDownLatch start = new CountDownLatch(1);
    List<Future<int[]>> threads = new ArrayList<>();
    for (int t = 0; t < 3; ++t) {
      threads.add(pool.submit(() -> {
        start.await();
        int[] counts = {0, 0};  // golden, busy
        for (int i = 0; i < 4; ++i) {
          try {
            assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy));
            ++counts[0];
          } catch (PocketException e) {
            assertEquals(PocketException.BUSY, e.getStatus(), e.getMessage());
            ++counts[1];
          }
        }
        return counts;
      }));
    }
    Future<?> reader = pool.submit(() -> {
      start.await();
      for (int i = 0; i < 50; ++i) {
        assertArrayEquals(golden.promptIds, llm.encode(golden.promptText));
        assertTrue(llm.getPosition() >= 0 && llm.getPosition() <= llm.getMaxSeqLen());
        llm.getStats();
      }
      return null;
    });
    start.countDown();
    int goldens = 0;
    for (Future<int[]> f : threads) goldens += f.get(60, TimeUnit.SECONDS)[0];
    reader.get(60, TimeUnit.SECONDS);
    assertTrue(goldens >= 1, "at least one call ran");
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy), "usable afterwards");
  }

  @Test
  void closeWhileThreadsCall() throws Exception {
    // Threads generate and read until close(): each call returns golden ids, fails with BUSY,
    // or (once closed) with IllegalStateException; close() returns after the running calls.
    LlmModule m = new LlmModule(Golden.llmModel(), Golden.llmTokenizer());
    CountDownLatch firstGolden = new CountDownLatch(1);
    List<Future<?>> threads = new ArrayList<>();
    for (int t = 0; t < 3; ++t) {
      boolean generates = t < 2;
      threads.add(pool.submit(() -> {
        while (true) {
          try {
            if (generates) {
              int[] ids = m.generateIds(golden.promptIds, greedy);  // close() cuts it short
              assertArrayEquals(Arrays.copyOf(golden.greedyIds, ids.length), ids);
              if (ids.length < golden.greedyIds.length) assertTrue(m.isClosed());
              firstGolden.countDown();
            } else {
              assertArrayEquals(golden.promptIds, m.encode(golden.promptText));
            }
          } catch (PocketException e) {
            assertEquals(PocketException.BUSY, e.getStatus(), e.getMessage());
          } catch (IllegalStateException closed) {
            return null;
          }
        }
      }));
    }
    assertTrue(firstGolden.await(60, TimeUnit.SECONDS));
    m.close();
    assertTrue(m.isClosed());
    for (Future<?> f : threads) f.get(30, TimeUnit.SECONDS);
  }

  @Test
  void chatKeepsTheConversation() {
    GenerationConfig four = GenerationConfig.builder().maxNewTokens(4).build();
    llm.reset();
    assertEquals(0, llm.getPosition());
    llm.setSystemPrompt("Be brief.");
    Collector first = new Collector();
    llm.chat("Hi", four, first);
    int afterFirst = llm.getPosition();
    assertTrue(afterFirst > 4);
    assertEquals(1, first.stats.size());
    Collector second = new Collector();
    llm.chat("More", four, second);
    assertTrue(llm.getPosition() > afterFirst + 4, "turn 2 continues the cache");
    // The same conversation again gives the same replies.
    llm.reset();
    Collector again = new Collector();
    llm.chat("Hi", four, again);
    assertEquals(first.text.toString(), again.text.toString());
    assertEquals(afterFirst, llm.getPosition());
    llm.setSystemPrompt(null);
    llm.reset();
    assertEquals(0, llm.getPosition());
  }

  @Test
  void properties() {
    assertEquals(128, llm.getMaxSeqLen());
    assertTrue(llm.getVocabSize() >= 300);
    llm.setNumThreads(1);
    llm.setNumThreads(0);
    assertThrows(IllegalArgumentException.class, () -> llm.setNumThreads(-1));
  }

  // ------------------------------------------------------------------ errors

  @Test
  void loadErrors() {
    PocketException missing = assertThrows(PocketException.class,
        () -> new LlmModule("/nonexistent.pocket", Golden.llmTokenizer()));
    assertEquals(PocketException.NOT_FOUND, missing.getStatus());
    PocketException noTokenizer = assertThrows(PocketException.class, () -> new LlmModule(Golden.llmModel()));
    assertEquals(PocketException.NOT_FOUND, noTokenizer.getStatus(), "the golden LLM embeds no tokenizer");
    assertThrows(PocketException.class, () -> new LlmModule(Golden.llmModel(), "/nonexistent/tokenizer.json"));
    assertThrows(PocketException.class, () -> new LlmModule(Golden.llmModel(), Golden.llmModel()));
    PocketException notLlm = assertThrows(PocketException.class,
        () -> new LlmModule(Golden.path("mlp.pocket"), Golden.llmTokenizer()));
    assertEquals(PocketException.INVALID_ARGUMENT, notLlm.getStatus());
    assertTrue(notLlm.getMessage().contains("not an LLM program"), notLlm.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new LlmModule(null));
    assertThrows(IllegalArgumentException.class, () -> new LlmModule(null, Golden.llmTokenizer()));
  }

  @Test
  void badArguments() {
    int[] tooLong = new int[200];
    java.util.Arrays.fill(tooLong, 5);
    PocketException overflow = assertThrows(PocketException.class, () -> llm.generateIds(tooLong, greedy));
    assertEquals(PocketException.OUT_OF_RANGE, overflow.getStatus());
    assertEquals(PocketException.INVALID_ARGUMENT,
        assertThrows(PocketException.class, () -> llm.generateIds(new int[0], greedy)).getStatus());
    assertEquals(PocketException.INVALID_ARGUMENT,
        assertThrows(PocketException.class, () -> llm.generateIds(new int[] {1 << 20}, greedy)).getStatus());
    assertThrows(PocketException.class, () -> llm.decode(new int[] {-1}));
    LlmCallback ignore = piece -> {};
    assertThrows(IllegalArgumentException.class, () -> llm.generate(null, greedy, ignore));
    assertThrows(IllegalArgumentException.class, () -> llm.generate("x", null, ignore));
    assertThrows(IllegalArgumentException.class, () -> llm.generate("x", greedy, null));
    assertThrows(IllegalArgumentException.class, () -> llm.generate("a\0b", greedy, ignore));
    assertThrows(IllegalArgumentException.class, () -> llm.chat(null, greedy, ignore));
    assertThrows(IllegalArgumentException.class, () -> llm.generateIds(null, greedy));
    assertThrows(IllegalArgumentException.class, () -> llm.generateIds(golden.promptIds, null));
    assertThrows(IllegalArgumentException.class, () -> llm.encode(null));
    assertThrows(IllegalArgumentException.class, () -> llm.decode(null));
    assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, greedy), "still usable");
  }

  @Test
  void useAfterClose() {
    LlmModule m = new LlmModule(Golden.llmModel(), Golden.llmTokenizer());
    m.close();
    m.close();
    assertTrue(m.isClosed());
    m.stop();  // harmless
    LlmCallback ignore = piece -> {};
    assertThrows(IllegalStateException.class, () -> m.generate("x", greedy, ignore));
    assertThrows(IllegalStateException.class, () -> m.chat("x", greedy, ignore));
    assertThrows(IllegalStateException.class, () -> m.generateIds(golden.promptIds, greedy));
    assertThrows(IllegalStateException.class, () -> m.encode("x"));
    assertThrows(IllegalStateException.class, () -> m.decode(new int[] {1}));
    assertThrows(IllegalStateException.class, m::reset);
    assertThrows(IllegalStateException.class, () -> m.setSystemPrompt("x"));
    assertThrows(IllegalStateException.class, m::getStats);
    assertThrows(IllegalStateException.class, m::getPosition);
  }

  @Test
  void closeDuringGeneration() throws Exception {
    // From another thread: close() stops the generation and waits for it to return.
    LlmModule m = new LlmModule(Golden.llmModel(), Golden.llmTokenizer());
    CountDownLatch first = new CountDownLatch(1);
    AtomicReference<LlmStats> result = new AtomicReference<>();
    Future<?> gen = pool.submit(() -> result.set(m.generate(golden.promptText,
        GenerationConfig.builder().maxNewTokens(100).build(), piece -> first.countDown())));
    assertTrue(first.await(30, TimeUnit.SECONDS));
    m.close();
    assertTrue(m.isClosed());
    gen.get(30, TimeUnit.SECONDS);
    assertNotEquals("", result.get().getStopReason());
    assertThrows(IllegalStateException.class, () -> m.encode("x"));

    // From inside the callback: the generation ends, then the model is freed.
    LlmModule n = new LlmModule(Golden.llmModel(), Golden.llmTokenizer());
    List<String> pieces = new ArrayList<>();
    LlmStats stats = n.generate(golden.promptText, greedy, piece -> {
      pieces.add(piece);
      n.close();
    });
    assertEquals("cancelled", stats.getStopReason());
    assertEquals(1, pieces.size());
    assertTrue(n.isClosed());
    assertThrows(IllegalStateException.class, () -> n.generateIds(golden.promptIds, greedy));
  }

  @Test
  void manyPiecesDoNotLeakLocalReferences() {
    // ~100 callbacks in one native call: each piece's JNI local reference must be released
    // (test.sh runs the JVM with -Xcheck:jni, which reports more than 32 live local references).
    int[] count = {0};
    LlmStats stats = llm.generate("12345", GenerationConfig.builder().maxNewTokens(120).build(), piece -> ++count[0]);
    assertTrue(count[0] > 64, "pieces: " + count[0] + ", " + stats);
  }
}
