package dev.pocket;

import androidx.annotation.NonNull;
import java.util.Arrays;

/**
 * What a method expects of one input (or promises of one output): dtype and shape bounds. A
 * static dimension has min == max; a dynamic one (exported with {@code torch.export.Dim}) accepts
 * any size in [min, max].
 */
public final class TensorInfo {
  private final DType dtype;
  private final long[] minShape;
  private final long[] maxShape;

  TensorInfo(DType dtype, long[] minShape, long[] maxShape) {
    this.dtype = dtype;
    this.minShape = minShape;
    this.maxShape = maxShape;
  }

  public @NonNull DType getDtype() {
    return dtype;
  }

  /** A copy of the smallest sizes. */
  public @NonNull long[] getMinShape() {
    return minShape.clone();
  }

  /** A copy of the largest sizes. */
  public @NonNull long[] getMaxShape() {
    return maxShape.clone();
  }

  public int getRank() {
    return minShape.length;
  }

  /** True when some dimension accepts more than one size. */
  public boolean isDynamic() {
    return !Arrays.equals(minShape, maxShape);
  }

  @Override
  public @NonNull String toString() {
    StringBuilder b = new StringBuilder(dtype.toString()).append('[');
    for (int i = 0; i < minShape.length; ++i) {
      if (i > 0) b.append(", ");
      b.append(minShape[i]);
      if (maxShape[i] != minShape[i]) b.append("..").append(maxShape[i]);
    }
    return b.append(']').toString();
  }
}
