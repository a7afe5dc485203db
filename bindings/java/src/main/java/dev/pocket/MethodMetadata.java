package dev.pocket;

import androidx.annotation.NonNull;
import java.util.List;

/** The signature of one method of a program: its inputs and outputs. */
public final class MethodMetadata {
  private final String name;
  private final List<TensorInfo> inputs;
  private final List<TensorInfo> outputs;

  MethodMetadata(String name, List<TensorInfo> inputs, List<TensorInfo> outputs) {
    this.name = name;
    this.inputs = inputs;
    this.outputs = outputs;
  }

  public @NonNull String getName() {
    return name;
  }

  /** One entry per input, in call order (unmodifiable). */
  public @NonNull List<TensorInfo> getInputs() {
    return inputs;
  }

  /** One entry per output (unmodifiable). */
  public @NonNull List<TensorInfo> getOutputs() {
    return outputs;
  }

  @Override
  public @NonNull String toString() {
    return name + inputs + " -> " + outputs;
  }
}
