package dev.pocket;

import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A loaded .pocket program: its methods ({@code forward}, ...) run on tensors.
 *
 * <pre>{@code
 * try (Module module = Module.load("/data/local/tmp/model.pocket")) {
 *   Tensor x = Tensor.fromBlob(new float[3 * 16], new long[] {3, 16});
 *   float[] y = module.forward(EValue.from(x))[0].toTensor().getDataAsFloatArray();
 * }
 * }</pre>
 *
 * <p>The file is verified when loaded (a malformed file is a {@link PocketException}, never a
 * crash). Calls are serialized: a module may be shared between threads, one call runs at a time,
 * and {@link #close()} waits for a running call. Close it to free its memory (the GC does not);
 * any use after close throws {@link IllegalStateException}.
 */
public final class Module implements AutoCloseable {
  /** How {@link #load(String, LoadMode)} brings the file in. */
  public enum LoadMode {
    /** Map the file; constant weights are used in place (least memory; the default). */
    MMAP,
    /** Read the whole file into memory. */
    READ
  }

  private long handle;
  private final String[] methodNames;

  private Module(long handle) {
    this.handle = handle;
    String[] names;
    try {
      byte[][] raw = NativeLib.moduleMethodNames(handle);
      names = new String[raw.length];
      for (int i = 0; i < raw.length; ++i) names[i] = Args.string(raw[i]);
    } catch (RuntimeException | Error e) {
      NativeLib.moduleDestroy(handle);
      throw e;
    }
    this.methodNames = names;
  }

  /** Loads (memory-maps) a .pocket file. @throws PocketException NOT_FOUND, IO, INVALID_PROGRAM, UNSUPPORTED */
  public static @NonNull Module load(@NonNull String path) {
    return load(path, LoadMode.MMAP);
  }

  /** Loads a .pocket file with the given mode. @throws PocketException NOT_FOUND, IO, INVALID_PROGRAM, UNSUPPORTED */
  public static @NonNull Module load(@NonNull String path, @NonNull LoadMode mode) {
    byte[] p = Args.utf8(path, "path");
    Args.notNull(mode, "mode");
    NativeLib.ensureLoaded();
    return new Module(NativeLib.moduleLoadFile(p, mode == LoadMode.READ ? 1 : 0));
  }

  /**
   * Loads the program stored in {@code length} bytes of the open file {@code fd} at {@code offset}:
   * an asset stored uncompressed in the APK (AssetFileDescriptor; {@code dev.pocket.android.PocketAndroid}
   * does this for you), a zip entry stored without deflate, any file the app holds open. The region
   * is mapped in place when {@code offset} is a multiple of 16 and read into memory otherwise
   * ({@link #isMapped()} tells which). The descriptor is borrowed: close it whenever you like after
   * this returns.
   *
   * @throws PocketException OUT_OF_RANGE for a region beyond the end of the file, INVALID_PROGRAM
   *     when there is no .pocket program at {@code offset} or {@code length} is too small for it,
   *     INVALID_ARGUMENT for a descriptor that is not open (messages name fd, offset and length)
   * @throws IllegalArgumentException for a negative offset or length
   */
  public static @NonNull Module load(int fd, long offset, long length) {
    return load(fd, offset, length, LoadMode.MMAP);
  }

  /** {@link #load(int, long, long)} with a load mode ({@link LoadMode#READ} always reads). */
  public static @NonNull Module load(int fd, long offset, long length, @NonNull LoadMode mode) {
    Args.region(offset, length);
    Args.notNull(mode, "mode");
    NativeLib.ensureLoaded();
    return new Module(NativeLib.moduleLoadFd(fd, offset, length, mode == LoadMode.READ ? 1 : 0));
  }

  /** Loads a program from its bytes (copied; the array may be reused). */
  public static @NonNull Module load(@NonNull byte[] program) {
    Args.notNull(program, "program");
    NativeLib.ensureLoaded();
    return new Module(NativeLib.moduleLoadBytes(program));
  }

  /** Loads a program from the bytes between the buffer's position and limit (copied; the buffer is not moved). */
  public static @NonNull Module load(@NonNull ByteBuffer program) {
    Args.notNull(program, "program");
    NativeLib.ensureLoaded();
    if (program.isDirect()) return new Module(NativeLib.moduleLoadDirect(program.slice()));
    byte[] bytes = new byte[program.remaining()];
    program.duplicate().get(bytes);
    return new Module(NativeLib.moduleLoadBytes(bytes));
  }

  /** Names of the program's methods, e.g. {@code ["forward"]} (a copy). */
  public synchronized @NonNull String[] getMethodNames() {
    checkOpen();
    return methodNames.clone();
  }

  /** Dtypes and shape bounds of a method's inputs and outputs. @throws PocketException NOT_FOUND for an unknown method */
  public synchronized @NonNull MethodMetadata getMethodMetadata(@NonNull String method) {
    byte[] m = Args.utf8(method, "method");
    long h = checkOpen();
    return new MethodMetadata(method, ioInfo(h, m, true), ioInfo(h, m, false));
  }

  private static List<TensorInfo> ioInfo(long h, byte[] method, boolean input) {
    int n = NativeLib.moduleIoCount(h, method, input);
    List<TensorInfo> out = new ArrayList<>(n);
    for (int i = 0; i < n; ++i) {
      long[] p = NativeLib.moduleIoInfo(h, method, i, input);
      int ndim = (int) p[1];
      long[] lo = new long[ndim];
      long[] hi = new long[ndim];
      System.arraycopy(p, 2, lo, 0, ndim);
      System.arraycopy(p, 2 + ndim, hi, 0, ndim);
      out.add(new TensorInfo(DType.fromCode((int) p[0]), lo, hi));
    }
    return Collections.unmodifiableList(out);
  }

  /** The program's string metadata (for LLMs: max_seq_len, bos/eos ids, ...), in file order (unmodifiable). */
  public synchronized @NonNull Map<String, String> getMetadata() {
    byte[][] raw = NativeLib.moduleMetadata(checkOpen());
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i + 1 < raw.length; i += 2) out.put(Args.string(raw[i]), Args.string(raw[i + 1]));
    return Collections.unmodifiableMap(out);
  }

  /** The metadata value stored under {@code key}, or null when there is none. */
  public @Nullable String getMetadata(@NonNull String key) {
    Args.notNull(key, "key");
    return getMetadata().get(key);
  }

  /** Runs {@code forward}. See {@link #execute}. */
  public @NonNull EValue[] forward(@NonNull EValue... inputs) {
    return execute("forward", inputs);
  }

  /**
   * Runs {@code method} on {@code inputs} (read during the call only) and returns new tensors
   * holding its outputs.
   *
   * @throws PocketException INVALID_ARGUMENT for a wrong input count, dtype, rank or a size
   *     outside the exported bounds (the message names the input); NOT_FOUND for an unknown method
   * @throws IllegalArgumentException for a null method, input array or input
   * @throws IllegalStateException after {@link #close()}
   */
  public synchronized @NonNull EValue[] execute(@NonNull String method, @NonNull EValue... inputs) {
    byte[] m = Args.utf8(method, "method");
    Args.notNull(inputs, "inputs");
    ByteBuffer[] data = new ByteBuffer[inputs.length];
    int[] dtypes = new int[inputs.length];
    long[][] shapes = new long[inputs.length][];
    for (int i = 0; i < inputs.length; ++i) {
      Tensor t = Args.notNull(inputs[i], "input " + i).toTensor();
      data[i] = t.nativeData();
      dtypes[i] = t.getDtype().code;
      shapes[i] = t.shapeRef();
    }
    Tensor[] outputs = NativeLib.moduleExecute(checkOpen(), m, data, dtypes, shapes);
    EValue[] out = new EValue[outputs.length];
    for (int i = 0; i < outputs.length; ++i) out[i] = EValue.from(outputs[i]);
    return out;
  }

  /** Threads kernels may use: 1 = the calling thread only, 0 = the runtime's default. */
  public synchronized void setNumThreads(int numThreads) {
    if (numThreads < 0) throw new IllegalArgumentException("numThreads must be >= 0, got " + numThreads);
    NativeLib.moduleSetNumThreads(checkOpen(), numThreads);
  }

  public synchronized boolean isClosed() {
    return handle == 0;
  }

  /** True when the program is used in place from a file mapping (no copy), false when it was read or copied. */
  public synchronized boolean isMapped() {
    return NativeLib.moduleIsMapped(checkOpen());
  }

  /** Frees the program and its memory; later calls throw IllegalStateException. Closing twice is fine. */
  @Override
  public synchronized void close() {
    long h = handle;
    handle = 0;
    if (h != 0) NativeLib.moduleDestroy(h);
  }

  private long checkOpen() {
    if (handle == 0) throw new IllegalStateException("Module is closed");
    return handle;
  }
}
