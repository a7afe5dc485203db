package dev.pocket;

import java.nio.charset.StandardCharsets;

/** Argument checks shared by the API classes: misuse becomes an exception, never a crash. */
final class Args {
  private Args() {}

  /** Checks a file region for the fd loaders: both values >= 0. */
  static void region(long offset, long length) {
    if (offset < 0 || length < 0)
      throw new IllegalArgumentException("offset and length must be >= 0, got offset " + offset + ", length " + length);
  }

  static <T> T notNull(T value, String what) {
    if (value == null) throw new IllegalArgumentException(what + " is null");
    return value;
  }

  /** The UTF-8 bytes of a string the C API takes NUL-terminated. */
  static byte[] utf8(String s, String what) {
    notNull(s, what);
    if (s.indexOf('\0') >= 0) throw new IllegalArgumentException(what + " contains a NUL character");
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String string(byte[] utf8) {
    return new String(utf8, StandardCharsets.UTF_8);
  }
}
