package dev.pocket;

import androidx.annotation.NonNull;

/**
 * A value passed to or returned by a method. pocket.h passes tensors only, so today every EValue
 * holds a {@link Tensor}; the wrapper keeps the {@code forward(EValue...)} signature stable for
 * other kinds later.
 */
public final class EValue {
  private final Tensor tensor;

  private EValue(Tensor tensor) {
    this.tensor = tensor;
  }

  /** Wraps a tensor. @throws IllegalArgumentException for null */
  public static @NonNull EValue from(@NonNull Tensor tensor) {
    return new EValue(Args.notNull(tensor, "tensor"));
  }

  public boolean isTensor() {
    return tensor != null;
  }

  /** The tensor. @throws IllegalStateException when this value is not a tensor */
  public @NonNull Tensor toTensor() {
    if (tensor == null) throw new IllegalStateException("EValue is not a tensor");
    return tensor;
  }

  @Override
  public @NonNull String toString() {
    return "EValue(" + tensor + ")";
  }
}
