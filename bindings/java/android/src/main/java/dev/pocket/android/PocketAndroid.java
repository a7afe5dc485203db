package dev.pocket.android;

import android.content.Context;
import androidx.annotation.NonNull;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Android specifics of Pocket; the dev.pocket API itself uses no android.* class.
 *
 * <pre>{@code
 * PocketAndroid.loadLibraries();                                   // optional: fail early
 * String path = PocketAndroid.assetFile(context, "smol.pocket");   // assets are not files
 * LlmModule llm = new LlmModule(path);
 * }</pre>
 *
 * The AAR ships libpocket.so and libpocket_jni.so in jni/&lt;abi&gt;/; dev.pocket loads them with
 * System.loadLibrary("pocket_jni") on first use, which finds them in the APK.
 */
public final class PocketAndroid {
  private PocketAndroid() {}

  /**
   * Loads libpocket and libpocket_jni now (dev.pocket would on first use), so a missing ABI shows
   * up at app start. @throws UnsatisfiedLinkError when the APK has no build for this device's ABI
   */
  public static void loadLibraries() {
    System.loadLibrary("pocket");
    System.loadLibrary("pocket_jni");
  }

  /**
   * A file path for an asset: Module and LlmModule map files, and APK assets are not files. The
   * asset is copied into {@code context.getFilesDir()/pocket/} once (again when its size changes);
   * large models are better downloaded to app storage than shipped as assets.
   */
  public static @NonNull String assetFile(@NonNull Context context, @NonNull String assetName) throws IOException {
    File dir = new File(context.getFilesDir(), "pocket");
    if (!dir.isDirectory() && !dir.mkdirs()) throw new IOException("cannot create " + dir);
    File out = new File(dir, new File(assetName).getName());
    File tmp = new File(dir, out.getName() + ".part");
    try (InputStream in = context.getAssets().open(assetName)) {
      // An asset stream's available() is the asset's remaining (uncompressed) size.
      if (out.isFile() && out.length() == in.available() && in.available() > 0) return out.getPath();
      try (OutputStream os = new FileOutputStream(tmp)) {
        byte[] buffer = new byte[1 << 16];
        for (int n; (n = in.read(buffer)) > 0;) {
          os.write(buffer, 0, n);
        }
      }
    }
    if (!tmp.renameTo(out)) throw new IOException("cannot rename " + tmp + " to " + out);
    return out.getPath();
  }
}
