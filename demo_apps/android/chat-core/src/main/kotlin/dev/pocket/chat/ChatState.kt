// The state a chat screen shows: plain immutable values, so a view renders whatever it is given
// and a ViewModel can hold it across screen rotation.
package dev.pocket.chat

enum class Role { USER, ASSISTANT }

/** Time to first token (prefill included) and decode speed of one reply. */
data class TurnStats(val timeToFirstTokenMs: Double, val tokensPerSecond: Double, val tokens: Int)

data class ChatMessage(
    val role: Role,
    val text: String,
    /** The assistant message being written right now. */
    val streaming: Boolean = false,
    /** The user pressed stop before the reply ended. */
    val stopped: Boolean = false,
    /** Set on a finished assistant message. */
    val stats: TurnStats? = null,
    /** Why this reply failed, if it did (the message text keeps what came before). */
    val error: String? = null
)

/** What the user can change; a new system prompt starts a new conversation. */
data class ChatSettings(
    val systemPrompt: String = "",
    /** 0 = greedy (the same reply every time). */
    val temperature: Float = 0.7f,
    val maxNewTokens: Int = 512
)

enum class ModelStatus { NOT_LOADED, LOADING, READY, FAILED }

data class ChatState(
    val model: ModelStatus = ModelStatus.NOT_LOADED,
    /** A file copy's progress (0..1) while a picked model is copied into app storage. */
    val copyProgress: Float? = null,
    val messages: List<ChatMessage> = emptyList(),
    val settings: ChatSettings = ChatSettings(),
    /** The last failure (loading, a reply), shown until the next action. */
    val error: String? = null
) {
    val generating: Boolean get() = messages.lastOrNull()?.streaming == true
    val canSend: Boolean get() = model == ModelStatus.READY && !generating
    /** Statistics of the latest finished reply, for the status line. */
    val lastStats: TurnStats? get() = messages.lastOrNull { it.stats != null }?.stats
}
