// Holds the ChatSession across configuration changes (rotation keeps the chat) and runs it on
// viewModelScope: state updates arrive on the main thread, generation runs on Dispatchers.IO.
package dev.pocket.demo.chat

import android.app.Application
import android.net.Uri
import android.provider.OpenableColumns
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.setValue
import androidx.lifecycle.AndroidViewModel
import androidx.lifecycle.viewModelScope
import dev.pocket.LlmModule
import dev.pocket.android.PocketAndroid
import dev.pocket.chat.ChatSession
import dev.pocket.chat.ChatSettings
import dev.pocket.chat.ChatState
import dev.pocket.chat.ModelFiles
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.io.File
import java.io.IOException

class ChatViewModel(app: Application) : AndroidViewModel(app) {
    var state by mutableStateOf(ChatState())
        private set

    private val session = ChatSession(Dispatchers.IO) { state = it }

    init {
        // The bundled asset, mapped in place from the APK; a file picked earlier wins.
        val picked = pickedModel()
        viewModelScope.launch {
            if (picked.isFile) {
                session.load { LlmModule(picked.path) }
            } else {
                session.load { PocketAndroid.loadLlmAsset(app, BuildConfig.MODEL_ASSET, null) }
            }
        }
    }

    fun send(text: String) {
        viewModelScope.launch { session.send(text) }
    }

    fun stop() = session.stop()

    fun newChat() {
        viewModelScope.launch { session.newChat() }
    }

    fun updateSettings(settings: ChatSettings) {
        viewModelScope.launch { session.updateSettings(settings) }
    }

    /** A model from the document picker: copied once into app storage (with progress), then mapped. */
    fun openModel(uri: Uri) {
        val app = getApplication<Application>()
        val dest = pickedModel()
        viewModelScope.launch {
            session.showCopyProgress(0f)
            try {
                withContext(Dispatchers.IO) {
                    val size = app.contentResolver.query(uri, arrayOf(OpenableColumns.SIZE), null, null, null)
                        ?.use { c -> if (c.moveToFirst() && !c.isNull(0)) c.getLong(0) else -1L } ?: -1L
                    val input = app.contentResolver.openInputStream(uri) ?: throw IOException("cannot open $uri")
                    dest.delete()  // a new pick replaces the old one, even when the sizes match
                    input.use { stream ->
                        ModelFiles.copyOnce(stream, size, dest) { p -> viewModelScope.launch { session.showCopyProgress(p) } }
                    }
                }
                session.showCopyProgress(null)
                session.load { LlmModule(dest.path) }
            } catch (e: Exception) {  // a failed copy is a message, like a failed load
                session.showCopyProgress(null)
                session.load { throw IOException("copying the model failed: ${e.message}", e) }
            }
        }
    }

    private fun pickedModel() = File(getApplication<Application>().filesDir, "models/picked.pocket")

    override fun onCleared() = session.close()
}
