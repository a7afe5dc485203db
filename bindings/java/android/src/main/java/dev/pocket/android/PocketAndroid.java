package dev.pocket.android;

import android.content.Context;
import android.content.res.AssetFileDescriptor;
import androidx.annotation.NonNull;
import androidx.annotation.Nullable;
import dev.pocket.LlmModule;
import dev.pocket.Module;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Android specifics of Pocket; the dev.pocket API itself uses no android.* class.
 *
 * <pre>{@code
 * PocketAndroid.loadLibraries();                                   // optional: fail early
 * LlmModule llm = PocketAndroid.loadLlmAsset(context, "smol.pocket", null);  // mapped from the APK
 * }</pre>
 *
 * <p>Models in assets are used in place, without a copy, when the APK stores them uncompressed;
 * in the app's build.gradle.kts:
 *
 * <pre>{@code
 * android { androidResources { noCompress += "pocket" } }
 * }</pre>
 *
 * Android's packager aligns stored entries to 4 bytes; the runtime maps an asset whose offset is a
 * multiple of 16 and reads the others into memory ({@link Module#isMapped()} tells which).
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
   * Loads the program asset {@code assetName} straight from the APK (see the class comment).
   *
   * @throws FileNotFoundException for a missing asset, or one the APK compresses (the message says
   *     to add {@code noCompress += "pocket"})
   * @throws dev.pocket.PocketException for a malformed program
   */
  public static @NonNull Module loadAsset(@NonNull Context context, @NonNull String assetName) throws IOException {
    try (AssetFileDescriptor afd = openAsset(context, assetName)) {
      return Module.load(afd.getParcelFileDescriptor().getFd(), afd.getStartOffset(), assetLength(afd));
    }
  }

  /**
   * Loads a chat model asset straight from the APK, with the tokenizer embedded in it when
   * {@code tokenizerPath} is null. @throws FileNotFoundException, dev.pocket.PocketException as
   * {@link #loadAsset}
   */
  public static @NonNull LlmModule loadLlmAsset(@NonNull Context context, @NonNull String assetName,
      @Nullable String tokenizerPath) throws IOException {
    try (AssetFileDescriptor afd = openAsset(context, assetName)) {
      return new LlmModule(afd.getParcelFileDescriptor().getFd(), afd.getStartOffset(), assetLength(afd), tokenizerPath);
    }
  }

  private static AssetFileDescriptor openAsset(Context context, String assetName) throws IOException {
    try {
      return context.getAssets().openFd(assetName);
    } catch (FileNotFoundException e) {  // also what openFd throws for a compressed asset
      FileNotFoundException named = new FileNotFoundException("asset '" + assetName + "' is missing or compressed in "
          + "the APK (add `android { androidResources { noCompress += \"pocket\" } }` to build.gradle.kts): "
          + e.getMessage());
      named.initCause(e);
      throw named;
    }
  }

  private static long assetLength(AssetFileDescriptor afd) {
    long n = afd.getLength();  // UNKNOWN_LENGTH: the asset runs to the end of the file
    return n != AssetFileDescriptor.UNKNOWN_LENGTH ? n : afd.getParcelFileDescriptor().getStatSize() - afd.getStartOffset();
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
