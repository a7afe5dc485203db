// A cold, collect-able stream of text pieces over the LLM callback API, for
// kotlinx-coroutines 1.0.1 (Debian's), which predates Flow. It behaves like Flow<String>:
//
//   val pieces = llm.chatFlow("Hi", GenerationConfig(maxNewTokens = 64))
//   val stats = pieces.collect { piece -> reply.append(piece) }   // suspends until the reply ends
//
// Nothing runs until collect(); each collect() starts a new generation. The generation blocks a
// thread of `dispatcher` (Dispatchers.IO by default) while `action` runs in the collector's
// context (the main thread in an app), so views never see a native call. The generating thread
// runs at most `buffer` pieces ahead of the collector, so a stop (the stop button while the
// screen catches up) takes effect within that many tokens. Cancelling the collecting
// coroutine, or `action` throwing, stops the generation after its current token
// (LlmModule.stop()) and collect() returns only once the native call has returned.
// With kotlinx-coroutines >= 1.3 the same adapter is `callbackFlow { ... }.flowOn(IO)`.
package dev.pocket.chat

import dev.pocket.GenerationConfig
import dev.pocket.LlmCallback
import dev.pocket.LlmModule
import dev.pocket.LlmStats
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield

class TokenFlow(
    private val dispatcher: CoroutineDispatcher,
    private val stop: () -> Unit,
    private val buffer: Int = 16,
    private val generate: (LlmCallback) -> LlmStats
) {
    /** Runs the generation, calls [action] with each piece in order, returns its statistics. */
    suspend fun collect(action: suspend (String) -> Unit): LlmStats = coroutineScope {
        val pieces = Channel<String>(buffer)
        val generation = async(dispatcher) {
            try {
                generate(LlmCallback { piece ->
                    // runBlocking + send, not sendBlocking: the same code on coroutines 1.0 and 1.8.
                    // A collector that has gone away closed the channel: drop the piece; stop() ends the call.
                    try {
                        runBlocking { pieces.send(piece) }
                    } catch (e: ClosedSendChannelException) {
                    } catch (e: CancellationException) {
                    }
                })
            } finally {
                pieces.close()
            }
        }
        try {
            for (piece in pieces) {
                action(piece)
                // A cancelled collector stops here, not once the pieces already buffered are
                // shown (a fast model fills the buffer faster than a screen takes them); and the
                // collector's thread (the main one in an app) gets a turn between pieces.
                yield()
            }
            generation.await()
        } catch (e: Throwable) {  // cancelled, or action threw: end the native call promptly
            stop()
            pieces.cancel()  // frees a generating thread waiting to hand over a piece
            throw e
        }
    }
}

/** [LlmModule.chat] as a [TokenFlow]: one chat turn (earlier turns stay in the KV cache). */
fun LlmModule.chatFlow(message: String, config: GenerationConfig,
                       dispatcher: CoroutineDispatcher = Dispatchers.IO): TokenFlow =
    TokenFlow(dispatcher, { stop() }) { callback -> chat(message, config, callback) }

/** [LlmModule.generate] as a [TokenFlow]: a new text after [prompt]. */
fun LlmModule.generateFlow(prompt: String, config: GenerationConfig,
                           dispatcher: CoroutineDispatcher = Dispatchers.IO): TokenFlow =
    TokenFlow(dispatcher, { stop() }) { callback -> generate(prompt, config, callback) }
