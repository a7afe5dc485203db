package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The golden programs of tests/golden (folder from the system property pocket.golden.dir):
 * .pocket files, their .io inputs/outputs and the tiny LLM's greedy ids.
 */
final class Golden {
  private Golden() {}

  static Path dir() {
    String d = System.getProperty("pocket.golden.dir");
    if (d == null) fail("set -Dpocket.golden.dir to tests/golden");
    return Paths.get(d);
  }

  static String path(String name) {
    return dir().resolve(name).toString();
  }

  /** Inputs and eager PyTorch outputs of a .io file. */
  static final class Io {
    final List<Tensor> inputs = new ArrayList<>();
    final List<Tensor> outputs = new ArrayList<>();
  }

  // u32 magic "PKIO", u32 n_inputs, u32 n_outputs, then per tensor: u32 dtype, u32 ndim,
  // i64 dims[ndim], raw data (little-endian).
  static Io readIo(String name) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(dir().resolve(name))).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[4];
    b.get(magic);
    assertEquals("PKIO", new String(magic, StandardCharsets.US_ASCII));
    int nIn = b.getInt();
    int nOut = b.getInt();
    Io io = new Io();
    for (int i = 0; i < nIn + nOut; ++i) {
      DType dtype = DType.fromCode(b.getInt());
      long[] shape = new long[b.getInt()];
      long numel = 1;
      for (int d = 0; d < shape.length; ++d) {
        shape[d] = b.getLong();
        numel *= shape[d];
      }
      ByteBuffer data = ByteBuffer.allocateDirect((int) (numel * dtype.elementSize)).order(ByteOrder.nativeOrder());
      ByteBuffer src = b.slice().order(ByteOrder.LITTLE_ENDIAN);
      src.limit(data.capacity());
      copyLittleEndian(src, data, dtype.elementSize);
      b.position(b.position() + data.capacity());
      data.clear();
      (i < nIn ? io.inputs : io.outputs).add(Tensor.fromBlob(data, shape, dtype));
    }
    return io;
  }

  private static void copyLittleEndian(ByteBuffer src, ByteBuffer dst, int size) {
    while (src.hasRemaining()) {
      switch (size) {
        case 1: dst.put(src.get()); break;
        case 2: dst.putShort(src.getShort()); break;
        case 4: dst.putInt(src.getInt()); break;
        default: dst.putLong(src.getLong()); break;
      }
    }
  }

  /** Tolerance of the golden comparisons: |got - want| <= ATOL + RTOL * |want|. */
  static final double ATOL = 1e-4;
  static final double RTOL = 1e-4;

  static void assertClose(Tensor want, Tensor got, String what) {
    assertEquals(want.getDtype(), got.getDtype(), what + " dtype");
    assertArrayEquals(want.getShape(), got.getShape(), what + " shape");
    if (want.getDtype() != DType.FLOAT32) {
      assertEquals(want.getDataAsByteBuffer(), got.getDataAsByteBuffer(), what + " data");
      return;
    }
    float[] w = want.getDataAsFloatArray();
    float[] g = got.getDataAsFloatArray();
    for (int i = 0; i < w.length; ++i) {
      if (!(Math.abs(g[i] - w[i]) <= ATOL + RTOL * Math.abs(w[i]))) {
        fail(what + " element " + i + ": got " + g[i] + ", want " + w[i]);
      }
    }
  }

  /** tiny_llm.greedy.txt: "prompt_ids ...", "greedy_ids ...", "prompt_text ...". */
  static final class Greedy {
    int[] promptIds;
    int[] greedyIds;
    String promptText;
  }

  static Greedy greedy() throws IOException {
    Greedy g = new Greedy();
    for (String line : Files.readAllLines(dir().resolve("tiny_llm.greedy.txt"), StandardCharsets.UTF_8)) {
      if (line.startsWith("prompt_ids ")) g.promptIds = ids(line.substring(11));
      if (line.startsWith("greedy_ids ")) g.greedyIds = ids(line.substring(11));
      if (line.startsWith("prompt_text ")) g.promptText = line.substring(12);
    }
    return g;
  }

  private static int[] ids(String s) {
    String[] parts = s.trim().split("\\s+");
    int[] out = new int[parts.length];
    for (int i = 0; i < parts.length; ++i) out[i] = Integer.parseInt(parts[i]);
    return out;
  }

  static String llmModel() {
    return path("tiny_llm.pocket");
  }

  static String llmTokenizer() {
    return path("tiny_llm.tokenizer.json");
  }
}
