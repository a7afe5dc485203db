package dev.pocket;

import androidx.annotation.NonNull;
import java.nio.charset.StandardCharsets;

/**
 * A failure reported by the Pocket runtime: a {@code pk_status} code of pocket.h, its name and
 * the runtime's message ({@code pk_last_error()}), which names what failed (file, method, input,
 * op, expected vs actual). Unchecked, like the rest of the API's exceptions.
 *
 * <pre>{@code
 * try (Module m = Module.load("missing.pocket")) {
 *   ...
 * } catch (PocketException e) {
 *   if (e.getStatus() == PocketException.NOT_FOUND) ...
 * }
 * }</pre>
 */
public class PocketException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  // The pk_status numbers of pocket.h; they are stable.
  public static final int INVALID_ARGUMENT = 1;
  public static final int INVALID_PROGRAM = 2;
  public static final int UNSUPPORTED = 3;
  public static final int NOT_FOUND = 4;
  public static final int OUT_OF_MEMORY = 5;
  public static final int IO = 6;
  public static final int OUT_OF_RANGE = 7;
  public static final int INTERNAL = 8;
  public static final int CANCELLED = 9;
  /** The object is in use by another call (pocket.h's thread-safety contract). */
  public static final int BUSY = 10;

  private final int status;
  private final String statusName;
  private final String detail;

  public PocketException(int status, @NonNull String statusName, @NonNull String detail) {
    super(statusName + ": " + detail);
    this.status = status;
    this.statusName = statusName;
    this.detail = detail;
  }

  /** Called by the JNI glue; strings arrive as UTF-8. */
  static PocketException fromNative(int status, byte[] statusName, byte[] detail) {
    return new PocketException(status, new String(statusName, StandardCharsets.UTF_8),
        new String(detail, StandardCharsets.UTF_8));
  }

  /** The {@code pk_status} number, e.g. {@link #NOT_FOUND}. */
  public int getStatus() {
    return status;
  }

  /** The status name, e.g. {@code "INVALID_PROGRAM"}. */
  public @NonNull String getStatusName() {
    return statusName;
  }

  /** The runtime's message without the status name. */
  public @NonNull String getDetail() {
    return detail;
  }
}
