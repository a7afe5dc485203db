package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Module on the golden programs: outputs equal eager PyTorch's, and every misuse throws. */
class ModuleTest {
  private static EValue[] evalues(List<Tensor> tensors) {
    EValue[] out = new EValue[tensors.size()];
    for (int i = 0; i < out.length; ++i) out[i] = EValue.from(tensors.get(i));
    return out;
  }

  private static void checkForward(Module m, Golden.Io io, String what) {
    EValue[] out = m.forward(evalues(io.inputs));
    assertEquals(io.outputs.size(), out.length, what + " output count");
    for (int i = 0; i < out.length; ++i) Golden.assertClose(io.outputs.get(i), out[i].toTensor(), what + " output " + i);
  }

  @ParameterizedTest
  @ValueSource(strings = {"mlp", "cnn", "encoder"})
  void forwardMatchesPyTorch(String name) throws IOException {
    Golden.Io io = Golden.readIo(name + ".forward.io");
    try (Module m = Module.load(Golden.path(name + ".pocket"))) {
      checkForward(m, io, name + " (mmap)");
      checkForward(m, io, name + " (second run)");
    }
    try (Module m = Module.load(Golden.path(name + ".pocket"), Module.LoadMode.READ)) {
      checkForward(m, io, name + " (read)");
    }
    byte[] bytes = Files.readAllBytes(Golden.dir().resolve(name + ".pocket"));
    try (Module m = Module.load(bytes)) {
      Arrays.fill(bytes, (byte) 0);  // the module holds its own copy
      checkForward(m, io, name + " (byte[])");
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length);
    direct.put(Files.readAllBytes(Golden.dir().resolve(name + ".pocket")));
    direct.flip();
    try (Module m = Module.load(direct)) {
      checkForward(m, io, name + " (direct buffer)");
    }
    try (Module m = Module.load(ByteBuffer.wrap(Files.readAllBytes(Golden.dir().resolve(name + ".pocket"))))) {
      checkForward(m, io, name + " (heap buffer)");
    }
  }

  @Test
  void methodNamesAndMetadata() {
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      assertTrue(Arrays.asList(m.getMethodNames()).contains("forward"));
      MethodMetadata meta = m.getMethodMetadata("forward");
      assertEquals("forward", meta.getName());
      assertEquals(1, meta.getInputs().size());
      assertEquals(1, meta.getOutputs().size());
      TensorInfo in = meta.getInputs().get(0);
      assertEquals(DType.FLOAT32, in.getDtype());
      assertEquals(2, in.getRank());
      assertArrayEquals(new long[] {1, 16}, in.getMinShape());
      assertArrayEquals(new long[] {16, 16}, in.getMaxShape());
      assertTrue(in.isDynamic());
      assertEquals("float32[1..16, 16]", in.toString());
      TensorInfo out = meta.getOutputs().get(0);
      assertEquals(DType.FLOAT32, out.getDtype());
      assertEquals(8, out.getMaxShape()[1]);
      assertThrows(UnsupportedOperationException.class, () -> meta.getInputs().clear());
      assertNull(m.getMetadata("no such key"));
    }
    try (Module m = Module.load(Golden.path("encoder.pocket"))) {
      TensorInfo in = m.getMethodMetadata("forward").getInputs().get(0);
      assertEquals(DType.INT64, in.getDtype());
      assertFalse(in.isDynamic());
      assertArrayEquals(new long[] {1, 12}, in.getMaxShape());
    }
    try (Module m = Module.load(Golden.path("tiny_llm.pocket"))) {
      Map<String, String> meta = m.getMetadata();
      assertEquals("128", meta.get("max_seq_len"), meta.toString());
      assertEquals("128", m.getMetadata("max_seq_len"));
      assertTrue(m.getMethodNames().length >= 1);
      for (String method : m.getMethodNames()) assertNotNull(m.getMethodMetadata(method));
    }
  }

  @Test
  void dynamicBatchWithinBounds() {
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      for (int batch : new int[] {1, 5, 16}) {
        Tensor x = Tensor.fromBlob(new float[batch * 16], new long[] {batch, 16});
        Tensor y = m.forward(EValue.from(x))[0].toTensor();
        assertArrayEquals(new long[] {batch, 8}, y.getShape());
      }
      PocketException e = assertThrows(PocketException.class,
          () -> m.forward(EValue.from(Tensor.zeros(DType.FLOAT32, new long[] {17, 16}))));
      assertEquals(PocketException.INVALID_ARGUMENT, e.getStatus());
      assertEquals("INVALID_ARGUMENT", e.getStatusName());
    }
  }

  @Test
  void directInputBufferIsReadAtEachRun() throws IOException {
    Golden.Io io = Golden.readIo("mlp.forward.io");
    Tensor x = io.inputs.get(0);
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      m.setNumThreads(1);
      float[] first = m.forward(EValue.from(x))[0].toTensor().getDataAsFloatArray();
      ByteBuffer data = x.getDataAsByteBuffer();
      for (int i = 0; i < data.capacity(); i += 4) data.putFloat(i, data.getFloat(i) + 1f);
      float[] second = m.forward(EValue.from(x))[0].toTensor().getDataAsFloatArray();
      assertFalse(Arrays.equals(first, second));
      m.setNumThreads(0);
      assertThrows(IllegalArgumentException.class, () -> m.setNumThreads(-1));
    }
  }

  @Test
  void concurrentCallsAreSerialized() throws Exception {
    Golden.Io io = Golden.readIo("cnn.forward.io");
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try (Module m = Module.load(Golden.path("cnn.pocket"))) {
      List<Future<?>> runs = new ArrayList<>();
      for (int i = 0; i < 12; ++i) runs.add(pool.submit(() -> checkForward(m, io, "cnn, concurrent")));
      for (Future<?> f : runs) f.get();
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void manyThreadsManyCallsEqualOneThread() throws Exception {
    // 4 threads x 25 calls on one module: every result equals the single-threaded one, bit for
    // bit (calls are serialized; they share the planned memory).
    Golden.Io io = Golden.readIo("mlp.forward.io");
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      float[] want = m.forward(evalues(io.inputs))[0].toTensor().getDataAsFloatArray();
      List<Future<?>> threads = new ArrayList<>();
      for (int t = 0; t < 4; ++t) {
        threads.add(pool.submit(() -> {
          for (int i = 0; i < 25; ++i) {
            assertArrayEquals(want, m.forward(evalues(io.inputs))[0].toTensor().getDataAsFloatArray(), "call " + i);
          }
          return null;
        }));
      }
      for (Future<?> f : threads) f.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void closeWhileOtherThreadsCall() throws Exception {
    // close() waits for the running call; the calls after it fail with IllegalStateException.
    Golden.Io io = Golden.readIo("mlp.forward.io");
    ExecutorService pool = Executors.newFixedThreadPool(3);
    Module m = Module.load(Golden.path("mlp.pocket"));
    float[] want = m.forward(evalues(io.inputs))[0].toTensor().getDataAsFloatArray();
    CountDownLatch running = new CountDownLatch(3);
    List<Future<Integer>> threads = new ArrayList<>();
    for (int t = 0; t < 3; ++t) {
      threads.add(pool.submit(() -> {
        running.countDown();
        for (int calls = 0;; ++calls) {
          float[] got;
          try {
            got = m.forward(evalues(io.inputs))[0].toTensor().getDataAsFloatArray();
          } catch (IllegalStateException closed) {
            return calls;
          }
          assertArrayEquals(want, got);
        }
      }));
    }
    try {
      assertTrue(running.await(30, TimeUnit.SECONDS));
      Thread.sleep(20);
      m.close();
      assertTrue(m.isClosed());
      for (Future<Integer> f : threads) assertTrue(f.get(30, TimeUnit.SECONDS) >= 0);
    } finally {
      pool.shutdown();
    }
  }

  // ------------------------------------------------------------------ errors

  @Test
  void missingAndCorruptFiles(@TempDir Path tmp) throws IOException {
    PocketException missing = assertThrows(PocketException.class, () -> Module.load("/nonexistent/model.pocket"));
    assertEquals(PocketException.NOT_FOUND, missing.getStatus());
    assertTrue(missing.getMessage().contains("/nonexistent/model.pocket"), missing.getMessage());

    Path garbage = tmp.resolve("garbage.pocket");
    Files.write(garbage, "this is not a pocket program, just some text".getBytes("UTF-8"));
    PocketException bad = assertThrows(PocketException.class, () -> Module.load(garbage.toString()));
    assertEquals(PocketException.INVALID_PROGRAM, bad.getStatus(), bad.getMessage());

    byte[] good = Files.readAllBytes(Golden.dir().resolve("mlp.pocket"));
    Path truncated = tmp.resolve("truncated.pocket");
    Files.write(truncated, Arrays.copyOf(good, good.length / 2));
    assertThrows(PocketException.class, () -> Module.load(truncated.toString(), Module.LoadMode.READ));
    assertThrows(PocketException.class, () -> Module.load(new byte[0]));
    assertThrows(PocketException.class, () -> Module.load(tmp.toString()));  // a folder
  }

  @Test
  void mutatedProgramsNeverCrash() throws IOException {
    // Verification at load must turn any damaged file into an exception: flip bytes all over.
    byte[] good = Files.readAllBytes(Golden.dir().resolve("mlp.pocket"));
    Tensor x = Tensor.zeros(DType.FLOAT32, new long[] {3, 16});
    Random random = new Random(6);
    int loaded = 0;
    for (int trial = 0; trial < 300; ++trial) {
      byte[] bad = good.clone();
      for (int k = 0; k < 1 + trial % 4; ++k) bad[random.nextInt(bad.length)] ^= (byte) (1 + random.nextInt(255));
      try (Module m = Module.load(bad)) {
        ++loaded;
        m.forward(EValue.from(x));
      } catch (PocketException expected) {
        assertTrue(expected.getStatus() > 0);
      }
    }
    assertTrue(loaded > 0, "some mutations only touch weights and still load");
  }

  @Test
  void wrongInputs() {
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      PocketException dtype = assertThrows(PocketException.class,
          () -> m.forward(EValue.from(Tensor.zeros(DType.INT64, new long[] {3, 16}))));
      assertEquals(PocketException.INVALID_ARGUMENT, dtype.getStatus());
      assertTrue(dtype.getMessage().contains("int64"), dtype.getMessage());
      PocketException rank = assertThrows(PocketException.class,
          () -> m.forward(EValue.from(Tensor.zeros(DType.FLOAT32, new long[] {48}))));
      assertEquals(PocketException.INVALID_ARGUMENT, rank.getStatus());
      PocketException width = assertThrows(PocketException.class,
          () -> m.forward(EValue.from(Tensor.zeros(DType.FLOAT32, new long[] {3, 15}))));
      assertEquals(PocketException.INVALID_ARGUMENT, width.getStatus());
      PocketException none = assertThrows(PocketException.class, () -> m.forward());
      assertEquals(PocketException.INVALID_ARGUMENT, none.getStatus());
      EValue x = EValue.from(Tensor.zeros(DType.FLOAT32, new long[] {3, 16}));
      PocketException two = assertThrows(PocketException.class, () -> m.forward(x, x));
      assertEquals(PocketException.INVALID_ARGUMENT, two.getStatus());
      PocketException method = assertThrows(PocketException.class, () -> m.execute("nope", x));
      assertEquals(PocketException.NOT_FOUND, method.getStatus());
      assertThrows(PocketException.class, () -> m.getMethodMetadata("nope"));
      assertEquals(1, m.forward(x).length, "the module still works after errors");
    }
  }

  @Test
  void nullArguments() {
    assertThrows(IllegalArgumentException.class, () -> Module.load((String) null));
    assertThrows(IllegalArgumentException.class, () -> Module.load((byte[]) null));
    assertThrows(IllegalArgumentException.class, () -> Module.load((ByteBuffer) null));
    assertThrows(IllegalArgumentException.class, () -> Module.load(Golden.path("mlp.pocket"), null));
    assertThrows(IllegalArgumentException.class, () -> Module.load("mlp\0.pocket"));
    try (Module m = Module.load(Golden.path("mlp.pocket"))) {
      assertThrows(IllegalArgumentException.class, () -> m.forward((EValue[]) null));
      assertThrows(IllegalArgumentException.class, () -> m.forward((EValue) null));
      assertThrows(IllegalArgumentException.class, () -> m.execute(null));
      assertThrows(IllegalArgumentException.class, () -> m.getMethodMetadata(null));
      assertThrows(IllegalArgumentException.class, () -> m.getMetadata(null));
    }
  }

  @Test
  void useAfterClose() {
    Module m = Module.load(Golden.path("mlp.pocket"));
    assertFalse(m.isClosed());
    m.close();
    m.close();
    assertTrue(m.isClosed());
    EValue x = EValue.from(Tensor.zeros(DType.FLOAT32, new long[] {3, 16}));
    assertThrows(IllegalStateException.class, () -> m.forward(x));
    assertThrows(IllegalStateException.class, () -> m.execute("forward", x));
    assertThrows(IllegalStateException.class, m::getMethodNames);
    assertThrows(IllegalStateException.class, () -> m.getMethodMetadata("forward"));
    assertThrows(IllegalStateException.class, m::getMetadata);
    assertThrows(IllegalStateException.class, () -> m.setNumThreads(1));
  }
}
