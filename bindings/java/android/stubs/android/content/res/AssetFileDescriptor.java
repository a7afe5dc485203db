// Compile-only stand-in for android.content.res.AssetFileDescriptor (see ../Context.java). Never shipped.
package android.content.res;

public class AssetFileDescriptor implements java.io.Closeable {
  public static final long UNKNOWN_LENGTH = -1;

  public android.os.ParcelFileDescriptor getParcelFileDescriptor() {
    throw new UnsupportedOperationException("stub");
  }

  public long getStartOffset() {
    throw new UnsupportedOperationException("stub");
  }

  public long getLength() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public void close() throws java.io.IOException {
    throw new UnsupportedOperationException("stub");
  }
}
