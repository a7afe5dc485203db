// A model the user picked (Android's document picker, a download) is copied once into app
// storage, where it can be mapped, with progress; no Android types, so it is tested on the JVM.
package dev.pocket.chat

import java.io.File
import java.io.IOException
import java.io.InputStream

object ModelFiles {
    /**
     * Copies [input] ([size] bytes, or -1 when unknown) to [dest] through a ".part" file renamed at
     * the end, so an interrupted copy never looks finished. Skips the copy when [dest] already has
     * [size] bytes. [onProgress] gets fractions in 0..1 (at most about 200 calls). Returns [dest].
     */
    @Throws(IOException::class)
    fun copyOnce(input: InputStream, size: Long, dest: File, onProgress: (Float) -> Unit = {}): File {
        if (size > 0 && dest.isFile && dest.length() == size) {
            onProgress(1f)
            return dest
        }
        dest.parentFile?.mkdirs()
        val part = File(dest.path + ".part")
        try {
            part.outputStream().use { out ->
                val buffer = ByteArray(1 shl 20)
                var done = 0L
                var reported = -1
                while (true) {
                    val n = input.read(buffer)
                    if (n < 0) break
                    out.write(buffer, 0, n)
                    done += n
                    val step = if (size > 0) (done * 200 / size).toInt() else -1
                    if (step > reported) {
                        reported = step
                        onProgress(minOf(1f, done.toFloat() / size))
                    }
                }
                if (size > 0 && done != size) throw IOException("copied $done of $size bytes to $dest")
            }
            if (!part.renameTo(dest)) throw IOException("cannot rename $part to $dest")
        } finally {
            part.delete()
        }
        onProgress(1f)
        return dest
    }
}
