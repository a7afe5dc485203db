// Compile-only stand-in for android.os.ParcelFileDescriptor (see ../content/Context.java). Never shipped.
package android.os;

public class ParcelFileDescriptor implements java.io.Closeable {
  public int getFd() {
    throw new UnsupportedOperationException("stub");
  }

  public long getStatSize() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public void close() throws java.io.IOException {
    throw new UnsupportedOperationException("stub");
  }
}
