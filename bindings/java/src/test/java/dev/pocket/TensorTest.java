package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Tensor, EValue and DType: pure Java, no native library involved. */
class TensorTest {
  private static final long[] S23 = {2, 3};

  @Test
  void dtypeCodesMatchPocketH() {
    String[] names = {"float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"};
    int[] sizes = {4, 2, 2, 8, 1, 1, 2, 4, 8, 1};
    assertEquals(names.length, DType.values().length);
    for (int code = 0; code < names.length; ++code) {
      DType t = DType.fromCode(code);
      assertEquals(code, t.code);
      assertEquals(names[code], t.toString());
      assertEquals(sizes[code], t.elementSize);
    }
    assertThrows(IllegalArgumentException.class, () -> DType.fromCode(10));
    assertThrows(IllegalArgumentException.class, () -> DType.fromCode(-1));
  }

  @Test
  void fromBlobCopiesEveryArrayKind() {
    float[] f = {1.5f, -2, 3, 4, 5, 6};
    Tensor t = Tensor.fromBlob(f, S23);
    f[0] = 99;
    assertEquals(DType.FLOAT32, t.getDtype());
    assertArrayEquals(S23, t.getShape());
    assertEquals(6, t.numel());
    assertArrayEquals(new float[] {1.5f, -2, 3, 4, 5, 6}, t.getDataAsFloatArray());
    assertArrayEquals(new double[] {1, 2}, Tensor.fromBlob(new double[] {1, 2}, new long[] {2}).getDataAsDoubleArray());
    assertArrayEquals(new int[] {7, -8}, Tensor.fromBlob(new int[] {7, -8}, new long[] {1, 2}).getDataAsIntArray());
    assertArrayEquals(new long[] {Long.MIN_VALUE, 5}, Tensor.fromBlob(new long[] {Long.MIN_VALUE, 5}, new long[] {2}).getDataAsLongArray());
    Tensor i8 = Tensor.fromBlob(new byte[] {-1, 2}, new long[] {2});
    assertEquals(DType.INT8, i8.getDtype());
    assertArrayEquals(new byte[] {-1, 2}, i8.getDataAsByteArray());
    Tensor u8 = Tensor.fromBlobUnsigned(new byte[] {(byte) 255}, new long[] {1});
    assertEquals(DType.UINT8, u8.getDtype());
    assertEquals(255, u8.getDataAsByteArray()[0] & 0xff);
    assertEquals(DType.BOOL, Tensor.fromBlob(new byte[] {0, 1}, new long[] {2}, DType.BOOL).getDtype());
    Tensor i16 = Tensor.fromBlob(new short[] {-3, 4}, new long[] {2});
    assertEquals(DType.INT16, i16.getDtype());
    assertArrayEquals(new short[] {-3, 4}, i16.getDataAsShortArray());
    Tensor bf16 = Tensor.fromBlob(new short[] {0x3f80}, new long[] {1}, DType.BFLOAT16);
    assertEquals(DType.BFLOAT16, bf16.getDtype());
  }

  @Test
  void halfPrecision() {
    Tensor h = Tensor.fromBlobHalf(new short[] {Tensor.floatToHalf(1f), Tensor.floatToHalf(-0.5f)}, new long[] {2});
    assertEquals(DType.FLOAT16, h.getDtype());
    short[] bits = h.getDataAsShortArray();
    assertEquals(0x3c00, bits[0] & 0xffff);
    assertEquals(-0.5f, Tensor.halfToFloat(bits[1]));
    assertEquals(0x7bff, Tensor.floatToHalf(65504f) & 0xffff);
    assertEquals(0x7c00, Tensor.floatToHalf(1e6f) & 0xffff);
    assertEquals(0x0001, Tensor.floatToHalf(5.9604645e-8f) & 0xffff);
    assertEquals(0, Tensor.floatToHalf(1e-9f));
    assertTrue(Float.isNaN(Tensor.halfToFloat(Tensor.floatToHalf(Float.NaN))));
    // Every half value survives half -> float -> half exactly.
    for (int b = 0; b < 0x10000; ++b) {
      float f = Tensor.halfToFloat((short) b);
      if (Float.isNaN(f)) continue;
      assertEquals(b, Tensor.floatToHalf(f) & 0xffff, "half bits " + Integer.toHexString(b));
    }
    // Ties round to even: 1 + 2^-11 lies halfway between 1 and the next half.
    assertEquals(0x3c00, Tensor.floatToHalf(1f + 0x1p-11f) & 0xffff);
    assertEquals(0x3c02, Tensor.floatToHalf(1f + 3 * 0x1p-11f) & 0xffff);
  }

  @Test
  void directBufferIsSharedHeapBufferIsCopied() {
    ByteBuffer direct = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
    Tensor t = Tensor.fromBlob(direct, S23, DType.FLOAT32);
    direct.putFloat(0, 42f);
    assertEquals(42f, t.getDataAsFloatArray()[0]);
    t.getDataAsByteBuffer().putFloat(4, 7f);
    assertEquals(7f, direct.getFloat(4));

    ByteBuffer heap = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
    heap.putFloat(0, 1f);
    Tensor c = Tensor.fromBlob(heap, S23, DType.FLOAT32);
    heap.putFloat(0, 2f);
    assertEquals(1f, c.getDataAsFloatArray()[0]);

    // position..limit is the data.
    ByteBuffer bigger = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
    bigger.putFloat(8, 3f);
    bigger.position(8);
    assertEquals(3f, Tensor.fromBlob(bigger, S23, DType.FLOAT32).getDataAsFloatArray()[0]);
  }

  @Test
  void badBuffersAndShapesThrow() {
    ByteBuffer bigEndian = ByteBuffer.allocateDirect(24).order(ByteOrder.BIG_ENDIAN);
    if (ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN) {
      assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(bigEndian, S23, DType.FLOAT32));
    }
    assertThrows(IllegalArgumentException.class,
        () -> Tensor.fromBlob(ByteBuffer.allocateDirect(20).order(ByteOrder.nativeOrder()), S23, DType.FLOAT32));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[5], S23));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[6], new long[] {-2, -3}));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[1], new long[9]));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[1], new long[] {1L << 40, 1L << 40}));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob((float[]) null, S23));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new float[6], null));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new byte[6], S23, DType.FLOAT32));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new short[6], S23, DType.INT32));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob(new byte[6], S23, null));
    assertThrows(IllegalArgumentException.class, () -> Tensor.fromBlob((ByteBuffer) null, S23, DType.INT8));
    assertThrows(IllegalArgumentException.class, () -> Tensor.zeros(null, S23));
  }

  @Test
  void wrongAccessorThrows() {
    Tensor f = Tensor.fromBlob(new float[6], S23);
    IllegalStateException e = assertThrows(IllegalStateException.class, f::getDataAsLongArray);
    assertTrue(e.getMessage().contains("int64") && e.getMessage().contains("float32"), e.getMessage());
    assertThrows(IllegalStateException.class, f::getDataAsIntArray);
    assertThrows(IllegalStateException.class, f::getDataAsByteArray);
    assertThrows(IllegalStateException.class, f::getDataAsShortArray);
    assertThrows(IllegalStateException.class, f::getDataAsDoubleArray);
    assertThrows(IllegalStateException.class, Tensor.fromBlob(new long[1], new long[] {1})::getDataAsFloatArray);
  }

  @Test
  void scalarsZerosAndShapeCopies() {
    Tensor s = Tensor.fromBlob(new float[] {3f}, new long[0]);
    assertEquals(1, s.numel());
    assertEquals(0, s.getShape().length);
    Tensor z = Tensor.zeros(DType.INT64, new long[] {2, 0});
    assertEquals(0, z.numel());
    assertEquals(0, z.getDataAsLongArray().length);
    long[] shape = {2, 3};
    Tensor t = Tensor.zeros(DType.FLOAT32, shape);
    shape[0] = 9;
    t.getShape()[1] = 9;
    assertArrayEquals(S23, t.getShape());
    assertArrayEquals(new float[6], t.getDataAsFloatArray());
    assertEquals("Tensor(float32, [2, 3])", t.toString());
  }

  @Test
  void evalueWrapsTensors() {
    Tensor t = Tensor.zeros(DType.FLOAT32, S23);
    EValue v = EValue.from(t);
    assertTrue(v.isTensor());
    assertSame(t, v.toTensor());
    assertThrows(IllegalArgumentException.class, () -> EValue.from(null));
    assertFalse(v.toString().isEmpty());
  }
}
