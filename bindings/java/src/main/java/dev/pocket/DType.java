package dev.pocket;

import androidx.annotation.NonNull;

/**
 * Element type of a {@link Tensor}. {@link #code} is the stable {@code pk_dtype} number of
 * pocket.h (and of the .pocket file format).
 */
public enum DType {
  FLOAT32(0, 4, "float32"),
  /** IEEE half precision; Java holds the raw bits in {@code short}s. */
  FLOAT16(1, 2, "float16"),
  /** bfloat16; Java holds the raw bits in {@code short}s. */
  BFLOAT16(2, 2, "bfloat16"),
  FLOAT64(3, 8, "float64"),
  INT8(4, 1, "int8"),
  UINT8(5, 1, "uint8"),
  INT16(6, 2, "int16"),
  INT32(7, 4, "int32"),
  INT64(8, 8, "int64"),
  /** One byte per element, 0 or 1. */
  BOOL(9, 1, "bool");

  /** The {@code pk_dtype} value. */
  public final int code;
  /** Bytes per element. */
  public final int elementSize;
  private final String label;

  DType(int code, int elementSize, String label) {
    this.code = code;
    this.elementSize = elementSize;
    this.label = label;
  }

  /**
   * The dtype whose {@code pk_dtype} number is {@code code}.
   *
   * @throws IllegalArgumentException for a number pocket.h does not define
   */
  public static @NonNull DType fromCode(int code) {
    for (DType t : values()) {
      if (t.code == code) return t;
    }
    throw new IllegalArgumentException("unknown pk_dtype " + code);
  }

  /** The name pocket.h's {@code pk_dtype_name} gives, e.g. {@code "float32"}. */
  @Override
  public @NonNull String toString() {
    return label;
  }
}
