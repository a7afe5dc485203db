package dev.pocket;

import androidx.annotation.NonNull;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A dense, contiguous, row-major tensor: a {@link DType}, a shape and its elements in a direct
 * {@link ByteBuffer} in the platform's byte order, which the runtime reads in place.
 *
 * <pre>{@code
 * Tensor x = Tensor.fromBlob(new float[] {1, 2, 3, 4, 5, 6}, new long[] {2, 3});
 * float[] y = module.forward(EValue.from(x))[0].toTensor().getDataAsFloatArray();
 * }</pre>
 *
 * <p>{@code fromBlob} on a Java array copies it; on a direct ByteBuffer it shares the memory (the
 * caller may refill it between runs). Tensors hold no native resources: nothing to close.
 * Outputs of {@link Module#forward} are new tensors holding copies. A tensor is not synchronized;
 * share it between threads only read-only.
 */
public final class Tensor {
  /** At most this many dimensions (pocket.h's limit). */
  public static final int MAX_DIMS = 8;

  private final DType dtype;
  private final long[] shape;
  private final ByteBuffer data;  // direct, native order, position 0, capacity == nbytes

  private Tensor(DType dtype, long[] shape, ByteBuffer data) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
  }

  // ------------------------------------------------------------------ factories

  /** A float32 tensor holding a copy of {@code data}; {@code data.length} must equal the shape's element count. */
  public static @NonNull Tensor fromBlob(@NonNull float[] data, @NonNull long[] shape) {
    Tensor t = allocate(DType.FLOAT32, shape, Args.notNull(data, "data").length);
    t.data.asFloatBuffer().put(data);
    return t;
  }

  /** A float64 tensor holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull double[] data, @NonNull long[] shape) {
    Tensor t = allocate(DType.FLOAT64, shape, Args.notNull(data, "data").length);
    t.data.asDoubleBuffer().put(data);
    return t;
  }

  /** An int32 tensor holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull int[] data, @NonNull long[] shape) {
    Tensor t = allocate(DType.INT32, shape, Args.notNull(data, "data").length);
    t.data.asIntBuffer().put(data);
    return t;
  }

  /** An int64 tensor holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull long[] data, @NonNull long[] shape) {
    Tensor t = allocate(DType.INT64, shape, Args.notNull(data, "data").length);
    t.data.asLongBuffer().put(data);
    return t;
  }

  /** An int8 tensor holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull byte[] data, @NonNull long[] shape) {
    return fromBlob(data, shape, DType.INT8);
  }

  /** A uint8 tensor holding a copy of {@code data} (Java bytes read as 0..255). */
  public static @NonNull Tensor fromBlobUnsigned(@NonNull byte[] data, @NonNull long[] shape) {
    return fromBlob(data, shape, DType.UINT8);
  }

  /** A one-byte tensor ({@link DType#INT8}, {@link DType#UINT8} or {@link DType#BOOL}) holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull byte[] data, @NonNull long[] shape, @NonNull DType dtype) {
    requireDtype(dtype, "fromBlob(byte[])", DType.INT8, DType.UINT8, DType.BOOL);
    Tensor t = allocate(dtype, shape, Args.notNull(data, "data").length);
    t.data.put(data);
    t.data.clear();
    return t;
  }

  /** An int16 tensor holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull short[] data, @NonNull long[] shape) {
    return fromBlob(data, shape, DType.INT16);
  }

  /** A float16 tensor from the IEEE half-precision bits in {@code bits} (see {@link #floatToHalf}). */
  public static @NonNull Tensor fromBlobHalf(@NonNull short[] bits, @NonNull long[] shape) {
    return fromBlob(bits, shape, DType.FLOAT16);
  }

  /** A two-byte tensor ({@link DType#INT16}, {@link DType#FLOAT16} or {@link DType#BFLOAT16}) holding a copy of {@code data}. */
  public static @NonNull Tensor fromBlob(@NonNull short[] data, @NonNull long[] shape, @NonNull DType dtype) {
    requireDtype(dtype, "fromBlob(short[])", DType.INT16, DType.FLOAT16, DType.BFLOAT16);
    Tensor t = allocate(dtype, shape, Args.notNull(data, "data").length);
    t.data.asShortBuffer().put(data);
    return t;
  }

  /**
   * A tensor over the bytes of {@code data} from its position to its limit, which must be exactly
   * the shape's size in bytes. A direct buffer is shared, not copied (for multi-byte dtypes it
   * must be in {@link ByteOrder#nativeOrder()}); a heap buffer is copied.
   */
  public static @NonNull Tensor fromBlob(@NonNull ByteBuffer data, @NonNull long[] shape, @NonNull DType dtype) {
    Args.notNull(data, "data");
    Args.notNull(dtype, "dtype");
    long[] dims = checkShape(shape);
    long nbytes = nbytes(dtype, dims);
    if (data.remaining() != nbytes) {
      throw new IllegalArgumentException("buffer has " + data.remaining() + " bytes, shape "
          + Arrays.toString(dims) + " of " + dtype + " needs " + nbytes);
    }
    if (data.isDirect()) {
      if (dtype.elementSize > 1 && data.order() != ByteOrder.nativeOrder()) {
        throw new IllegalArgumentException("a direct buffer of " + dtype + " must be in the native byte order ("
            + ByteOrder.nativeOrder() + "); call order(ByteOrder.nativeOrder()) before writing it");
      }
      return new Tensor(dtype, dims, data.slice().order(ByteOrder.nativeOrder()));
    }
    Tensor t = allocate(dtype, dims, (int) (nbytes / dtype.elementSize));
    t.data.put(data.duplicate());
    t.data.clear();
    return t;
  }

  /** A zero-filled tensor. */
  public static @NonNull Tensor zeros(@NonNull DType dtype, @NonNull long[] shape) {
    Args.notNull(dtype, "dtype");
    long[] dims = checkShape(shape);
    return allocate(dtype, dims, numel(dims));
  }

  /** Called by the JNI glue with an output's copy. */
  static Tensor fromNative(int dtype, long[] shape, ByteBuffer data) {
    return new Tensor(DType.fromCode(dtype), shape, data.order(ByteOrder.nativeOrder()));
  }

  // ------------------------------------------------------------------ properties

  public @NonNull DType getDtype() {
    return dtype;
  }

  /** A copy of the shape. */
  public @NonNull long[] getShape() {
    return shape.clone();
  }

  /** Number of elements (1 for a scalar of shape {@code []}). */
  public long numel() {
    long n = 1;
    for (long d : shape) n *= d;
    return n;
  }

  /** The element bytes as a view (shared, native order, position 0); writes go into the tensor. */
  public @NonNull ByteBuffer getDataAsByteBuffer() {
    return data.duplicate().order(ByteOrder.nativeOrder());
  }

  /** A copy of the elements of a float32 tensor. @throws IllegalStateException for another dtype */
  public @NonNull float[] getDataAsFloatArray() {
    requireDtype(dtype, "getDataAsFloatArray()", DType.FLOAT32);
    float[] out = new float[(int) numel()];
    view().asFloatBuffer().get(out);
    return out;
  }

  /** A copy of the elements of a float64 tensor. @throws IllegalStateException for another dtype */
  public @NonNull double[] getDataAsDoubleArray() {
    requireDtype(dtype, "getDataAsDoubleArray()", DType.FLOAT64);
    double[] out = new double[(int) numel()];
    view().asDoubleBuffer().get(out);
    return out;
  }

  /** A copy of the elements of an int32 tensor. @throws IllegalStateException for another dtype */
  public @NonNull int[] getDataAsIntArray() {
    requireDtype(dtype, "getDataAsIntArray()", DType.INT32);
    int[] out = new int[(int) numel()];
    view().asIntBuffer().get(out);
    return out;
  }

  /** A copy of the elements of an int64 tensor. @throws IllegalStateException for another dtype */
  public @NonNull long[] getDataAsLongArray() {
    requireDtype(dtype, "getDataAsLongArray()", DType.INT64);
    long[] out = new long[(int) numel()];
    view().asLongBuffer().get(out);
    return out;
  }

  /** A copy of the elements of an int8, uint8 or bool tensor. @throws IllegalStateException for another dtype */
  public @NonNull byte[] getDataAsByteArray() {
    requireDtype(dtype, "getDataAsByteArray()", DType.INT8, DType.UINT8, DType.BOOL);
    byte[] out = new byte[(int) numel()];
    view().get(out);
    return out;
  }

  /**
   * A copy of the elements of an int16 tensor, or the raw bits of a float16/bfloat16 tensor
   * (see {@link #halfToFloat}). @throws IllegalStateException for another dtype
   */
  public @NonNull short[] getDataAsShortArray() {
    requireDtype(dtype, "getDataAsShortArray()", DType.INT16, DType.FLOAT16, DType.BFLOAT16);
    short[] out = new short[(int) numel()];
    view().asShortBuffer().get(out);
    return out;
  }

  @Override
  public @NonNull String toString() {
    return "Tensor(" + dtype + ", " + Arrays.toString(shape) + ")";
  }

  // ------------------------------------------------------------------ half precision

  /** The float value of IEEE half-precision bits (exact). */
  public static float halfToFloat(short bits) {
    int h = bits & 0xffff;
    int sign = (h & 0x8000) << 16;
    int exp = (h >>> 10) & 0x1f;
    int mant = h & 0x3ff;
    if (exp == 0x1f) return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));  // inf, NaN
    if (exp != 0) return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
    float sub = mant * 5.9604645e-8f;  // subnormal: mant * 2^-24
    return sign != 0 ? -sub : sub;
  }

  /** IEEE half-precision bits of {@code value}, rounded to nearest even. */
  public static short floatToHalf(float value) {
    int f = Float.floatToRawIntBits(value);
    int sign = (f >>> 16) & 0x8000;
    int exp = (f >>> 23) & 0xff;
    int mant = f & 0x7fffff;
    if (exp == 0xff) return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 : 0));  // inf, NaN
    int e = exp - 112;  // rebias 127 -> 15
    if (e >= 0x1f) return (short) (sign | 0x7c00);  // overflow -> inf
    if (e <= 0) {  // subnormal or zero in half
      if (e < -10) return (short) sign;
      mant |= 0x800000;
      int shift = 14 - e;
      int half = mant >>> shift;
      int rest = mant & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rest > mid || (rest == mid && (half & 1) != 0)) half++;
      return (short) (sign | half);
    }
    int half = (e << 10) | (mant >>> 13);
    int rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1) != 0)) half++;  // may carry into inf: correct
    return (short) (sign | half);
  }

  // ------------------------------------------------------------------ internals

  /** Data for the JNI call: a direct, native-order buffer with capacity == nbytes. */
  ByteBuffer nativeData() {
    return data;
  }

  long[] shapeRef() {
    return shape;
  }

  private ByteBuffer view() {
    return data.duplicate().order(ByteOrder.nativeOrder());
  }

  private static Tensor allocate(DType dtype, long[] shape, int length) {
    long[] dims = checkShape(shape);
    long n = numel(dims);
    if (n != length) {
      throw new IllegalArgumentException("data has " + length + " elements, shape " + Arrays.toString(dims)
          + " has " + n);
    }
    long nbytes = nbytes(dtype, dims);
    return new Tensor(dtype, dims, ByteBuffer.allocateDirect((int) nbytes).order(ByteOrder.nativeOrder()));
  }

  private static long[] checkShape(long[] shape) {
    Args.notNull(shape, "shape");
    if (shape.length > MAX_DIMS) {
      throw new IllegalArgumentException("shape has " + shape.length + " dims; at most " + MAX_DIMS + " are supported");
    }
    long n = 1;
    for (int i = 0; i < shape.length; ++i) {
      if (shape[i] < 0) throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has a negative size at dim " + i);
      n *= shape[i];
      if (n > Integer.MAX_VALUE) throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " is too large for a Java tensor");
    }
    return shape.clone();
  }

  private static int numel(long[] dims) {
    long n = 1;
    for (long d : dims) n *= d;
    return (int) n;
  }

  private static long nbytes(DType dtype, long[] dims) {
    long nbytes = (long) numel(dims) * dtype.elementSize;
    if (nbytes > Integer.MAX_VALUE) throw new IllegalArgumentException("tensor larger than 2 GiB");
    return nbytes;
  }

  private static void requireDtype(DType dtype, String what, DType... allowed) {
    Args.notNull(dtype, "dtype");
    for (DType a : allowed) {
      if (a == dtype) return;
    }
    String needs = what + " needs " + (allowed.length == 1 ? allowed[0] : Arrays.toString(allowed));
    if (what.startsWith("fromBlob")) throw new IllegalArgumentException(needs + ", got " + dtype);
    throw new IllegalStateException(needs + "; this tensor is " + dtype);
  }
}
