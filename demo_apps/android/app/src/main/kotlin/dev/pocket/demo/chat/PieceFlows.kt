// kotlinx.coroutines Flow<String> over chat-core's TokenFlow, for app code that composes flows:
//
//   llm.chatPieces("Hi", config).collect { piece -> reply.append(piece) }
//
// chat-core cannot expose Flow itself: it is also built against Debian's kotlinx-coroutines 1.0.1,
// which predates Flow. The adapter adds nothing of its own: ordering, back-pressure and stop on
// cancellation are TokenFlow's (tested on the host by chat-core/test.sh).
package dev.pocket.demo.chat

import dev.pocket.GenerationConfig
import dev.pocket.LlmModule
import dev.pocket.chat.TokenFlow
import dev.pocket.chat.chatFlow
import dev.pocket.chat.generateFlow
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/** The pieces of one generation as a cold [Flow]: each collection starts a new generation. */
fun TokenFlow.asFlow(): Flow<String> = flow { this@asFlow.collect { piece -> emit(piece) } }

/** One chat turn's pieces (earlier turns stay in the KV cache). */
fun LlmModule.chatPieces(message: String, config: GenerationConfig): Flow<String> =
    chatFlow(message, config).asFlow()

/** A new text after [prompt], as pieces. */
fun LlmModule.generatePieces(prompt: String, config: GenerationConfig): Flow<String> =
    generateFlow(prompt, config).asFlow()
