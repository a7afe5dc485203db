// Compile-only stand-in for android.content.res.AssetManager (see ../Context.java). Never shipped.
package android.content.res;

public final class AssetManager {
  public java.io.InputStream open(String fileName) throws java.io.IOException {
    throw new UnsupportedOperationException("stub");
  }

  public AssetFileDescriptor openFd(String fileName) throws java.io.IOException {
    throw new UnsupportedOperationException("stub");
  }
}
