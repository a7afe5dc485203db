package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Module.load(fd, offset, length) and LlmModule(fd, offset, length, ...): golden programs stored
 * (not deflated) inside a zip, as assets are inside an APK, run like the files themselves; a wrong
 * offset or length throws a PocketException naming it.
 */
class LoadFdTest {
  @TempDir Path tmp;

  /** Where the program starts inside the zip, and its length. */
  private static final class Region {
    long offset;
    long length;
  }

  /**
   * Writes a zip of a 5000-byte text entry and {@code program} stored at an offset that is
   * {@code skew} more than a multiple of 64 (padded through the local header's extra field, as
   * zipalign does).
   */
  private static Region storedZip(Path zip, Path program, int skew) throws IOException {
    byte[] data = Files.readAllBytes(program);
    byte[] text = new byte[5000];
    Arrays.fill(text, (byte) 'x');
    String name = "assets/model.pocket";
    long headerEnd = 30 + "readme.txt".length() + text.length + 30 + name.length() + 4;
    int pad = (int) Math.floorMod(skew - headerEnd, 64L);
    byte[] extra = new byte[4 + pad];
    extra[0] = (byte) 0x35;  // 0xD935, Android's alignment field
    extra[1] = (byte) 0xD9;
    extra[2] = (byte) pad;
    try (OutputStream out = Files.newOutputStream(zip); ZipOutputStream z = new ZipOutputStream(out)) {
      z.putNextEntry(stored("readme.txt", text, null));
      z.write(text);
      z.putNextEntry(stored(name, data, extra));
      z.write(data);
    }
    Region r = new Region();
    r.offset = headerEnd + pad;
    r.length = data.length;
    byte[] all = Files.readAllBytes(zip);  // the entry's bytes really are there, unchanged
    assertArrayEquals(data, Arrays.copyOfRange(all, (int) r.offset, (int) (r.offset + r.length)), "zip layout");
    return r;
  }

  private static ZipEntry stored(String name, byte[] data, byte[] extra) {
    ZipEntry e = new ZipEntry(name);
    e.setMethod(ZipEntry.STORED);
    CRC32 crc = new CRC32();
    crc.update(data);
    e.setCrc(crc.getValue());
    e.setSize(data.length);
    e.setCompressedSize(data.length);
    if (extra != null) e.setExtra(extra);
    return e;
  }

  /** The descriptor number of {@code in}, open on {@code file} (Android: ParcelFileDescriptor.getFd()). */
  private static int fdOf(FileInputStream in, Path file) throws IOException {
    assertTrue(in.getFD().valid(), "stream is closed");
    Path target = file.toRealPath();
    int found = -1;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Paths.get("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          if (Files.readSymbolicLink(fd).equals(target)) found = Math.max(found, Integer.parseInt(fd.getFileName().toString()));
        } catch (IOException e) {
          // the directory's own descriptor is gone by now
        }
      }
    }
    assertTrue(found >= 0, "no descriptor for " + file + " in /proc/self/fd");
    return found;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 4})
  void programInAZipRunsLikeTheFile(int skew) throws IOException {
    Path zip = tmp.resolve("app.zip");
    Region r = storedZip(zip, Paths.get(Golden.path("mlp.pocket")), skew);
    Golden.Io io = Golden.readIo("mlp.forward.io");
    try (FileInputStream in = new FileInputStream(zip.toFile());
        Module m = Module.load(fdOf(in, zip), r.offset, r.length)) {
      assertEquals(skew == 0, m.isMapped(), "mapped in place only at a 16-aligned offset");
      EValue[] inputs = new EValue[io.inputs.size()];
      for (int i = 0; i < inputs.length; ++i) inputs[i] = EValue.from(io.inputs.get(i));
      EValue[] out = m.forward(inputs);
      for (int i = 0; i < out.length; ++i) Golden.assertClose(io.outputs.get(i), out[i].toTensor(), "output " + i);
      try (Module file = Module.load(Golden.path("mlp.pocket"))) {
        EValue[] want = file.forward(inputs);
        for (int i = 0; i < out.length; ++i) {
          assertArrayEquals(want[i].toTensor().getDataAsFloatArray(), out[i].toTensor().getDataAsFloatArray(),
              "bit-identical to the file's output " + i);
        }
      }
    }
  }

  @Test
  void wrongOffsetOrLengthIsAClearError() throws IOException {
    Path zip = tmp.resolve("app.zip");
    Region r = storedZip(zip, Paths.get(Golden.path("mlp.pocket")), 0);
    long size = Files.size(zip);
    try (FileInputStream in = new FileInputStream(zip.toFile())) {
      int fd = fdOf(in, zip);
      expect(PocketException.INVALID_PROGRAM, "wrong magic", () -> Module.load(fd, r.offset - 16, r.length));
      expect(PocketException.INVALID_PROGRAM, "offset " + (r.offset + 4), () -> Module.load(fd, r.offset + 4, r.length));
      expect(PocketException.INVALID_PROGRAM, "length " + (r.length - 100), () -> Module.load(fd, r.offset, r.length - 100));
      expect(PocketException.OUT_OF_RANGE, "beyond the end of the file", () -> Module.load(fd, r.offset, size));
      expect(PocketException.OUT_OF_RANGE, "beyond the end of the file", () -> Module.load(fd, size + 64, 64));
      expect(PocketException.INVALID_PROGRAM, "fd " + fd, () -> new LlmModule(fd, r.offset - 16, r.length, null));
      assertThrows(IllegalArgumentException.class, () -> Module.load(fd, -1, r.length));
      assertThrows(IllegalArgumentException.class, () -> new LlmModule(fd, 0, -5, null));
    }
    expect(PocketException.INVALID_ARGUMENT, "not an open file descriptor", () -> Module.load(987654, 0, 64));
  }

  @Test
  void llmFromAZipGeneratesLikeTheFile() throws IOException {
    Path zip = tmp.resolve("app.zip");
    Region r = storedZip(zip, Paths.get(Golden.llmModel()), 0);
    Golden.Greedy golden = Golden.greedy();
    GenerationConfig greedy = GenerationConfig.builder().maxNewTokens(golden.greedyIds.length).build();
    LlmModule llm;
    try (FileInputStream in = new FileInputStream(zip.toFile())) {
      llm = new LlmModule(fdOf(in, zip), r.offset, r.length, Golden.llmTokenizer());
    }  // the descriptor is closed; the mapping stays
    try (LlmModule fromZip = llm) {
      assertArrayEquals(golden.greedyIds, fromZip.generateIds(golden.promptIds, greedy));
      StringBuilder text = new StringBuilder();
      fromZip.generate(golden.promptText, greedy, text::append);
      assertEquals(fromZip.decode(golden.greedyIds), text.toString());
    }
  }

  private static void expect(int status, String needle, Runnable call) {
    PocketException e = assertThrows(PocketException.class, call::run);
    assertEquals(status, e.getStatus(), e.getMessage());
    assertTrue(e.getMessage().contains(needle), "'" + e.getMessage() + "' does not mention '" + needle + "'");
  }
}
