// Compile-only stand-in for the one part of android.content.Context that PocketAndroid uses,
// so test.sh can compile the Android source set without an Android SDK. Never shipped.
package android.content;

public abstract class Context {
  public abstract android.content.res.AssetManager getAssets();

  public abstract java.io.File getFilesDir();
}
