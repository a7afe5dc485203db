// The chat logic under the screen, with no UI and no Android: load a model, send a message and
// stream the reply into the last message, stop it, change settings, start over. Every change is
// a new ChatState handed to `onState`; a failure is state (ChatState.error), never an exception.
//
//   val session = ChatSession { state -> render(state) }
//   session.load { LlmModule(path) }        // or PocketAndroid.loadLlmAsset(context, name, null)
//   session.send("Hello!")                  // suspends until the reply has ended
//   session.stop()                          // from the stop button, any thread
//
// Call load, send, updateSettings, newChat and close from one coroutine context (the main
// thread in an app); stop() works from anywhere. Generation runs on `dispatcher`.
package dev.pocket.chat

import dev.pocket.GenerationConfig
import dev.pocket.LlmModule
import dev.pocket.LlmStats
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

class ChatSession(
    private val dispatcher: CoroutineDispatcher = Dispatchers.IO,
    private val onState: (ChatState) -> Unit = {}
) : AutoCloseable {
    var state = ChatState()
        private set(value) {
            field = value
            onState(value)
        }

    @Volatile private var llm: LlmModule? = null

    /** Loads the model that [open] returns (on [dispatcher]); any failure becomes state. */
    suspend fun load(open: () -> LlmModule) {
        close()
        state = state.copy(model = ModelStatus.LOADING, error = null, messages = emptyList())
        state = try {
            val model = withContext(dispatcher) { open() }
            llm = model
            applySystemPrompt(model, state.settings.systemPrompt)
            state.copy(model = ModelStatus.READY)
        } catch (e: Exception) {
            state.copy(model = ModelStatus.FAILED, error = "Could not load the model: ${describe(e)}")
        }
    }

    /** Shows the progress of a model file being copied (see [ModelFiles.copyOnce]); null when done. */
    fun showCopyProgress(fraction: Float?) {
        state = state.copy(copyProgress = fraction)
    }

    /**
     * Sends [text] and streams the reply into a new assistant message, which ends with its stats,
     * stopped by [stop], or with an error. Ignored while a reply is being written or without a model.
     */
    suspend fun send(text: String) {
        val model = llm ?: return
        if (!state.canSend || text.isBlank()) return
        state = state.copy(error = null,
            messages = state.messages + ChatMessage(Role.USER, text) + ChatMessage(Role.ASSISTANT, "", streaming = true))
        val reply = StringBuilder()
        try {
            val stats = model.chatFlow(text, config(), dispatcher).collect { piece ->
                reply.append(piece)
                updateReply { it.copy(text = reply.toString()) }
            }
            updateReply { it.copy(streaming = false, stopped = stats.stopReason == "cancelled", stats = turnStats(stats)) }
        } catch (e: Exception) {
            // A cancelled coroutine ends the reply as stopped; anything else is shown.
            val cancelled = e is kotlinx.coroutines.CancellationException
            updateReply { it.copy(streaming = false, stopped = cancelled, error = if (cancelled) null else describe(e)) }
            if (cancelled) throw e
            state = state.copy(error = describe(e))
        }
    }

    /** The stop button: ends the reply being written after its current token. Any thread. */
    fun stop() {
        llm?.stop()
    }

    /** New settings; a changed system prompt starts a new conversation (it opens one). */
    suspend fun updateSettings(settings: ChatSettings) {
        val promptChanged = settings.systemPrompt != state.settings.systemPrompt
        state = state.copy(settings = settings)
        if (promptChanged) newChat()
    }

    /** Forgets the conversation (the KV cache too). */
    suspend fun newChat() {
        val model = llm
        state = state.copy(messages = emptyList(), error = null)
        if (model != null) {
            try {
                withContext(dispatcher) { model.reset() }
                applySystemPrompt(model, state.settings.systemPrompt)
            } catch (e: Exception) {
                state = state.copy(error = describe(e))
            }
        }
    }

    /** Frees the model (waits for a running reply to stop). */
    override fun close() {
        val model = llm
        llm = null
        model?.close()
    }

    private fun config() = GenerationConfig.builder()
        .maxNewTokens(state.settings.maxNewTokens)
        .temperature(state.settings.temperature)
        .topP(if (state.settings.temperature > 0f) 0.95f else 1f)
        .seed(System.nanoTime())
        .build()

    private fun applySystemPrompt(model: LlmModule, prompt: String) {
        if (prompt.isNotEmpty()) model.setSystemPrompt(prompt)  // else: the model's own default
    }

    private inline fun updateReply(change: (ChatMessage) -> ChatMessage) {
        val messages = state.messages
        state = state.copy(messages = messages.dropLast(1) + change(messages.last()))
    }

    private fun turnStats(s: LlmStats) = TurnStats(s.ttftMs, s.decodeTokensPerSecond, s.generatedTokens)

    private fun describe(e: Throwable): String = e.message ?: e.javaClass.simpleName
}
