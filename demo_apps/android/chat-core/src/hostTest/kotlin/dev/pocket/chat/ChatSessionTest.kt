// ChatSession, TokenFlow and ModelFiles against the real runtime and the golden tiny LLM
// (tests/golden/tiny_llm.pocket, its tokenizer.json): streaming order, stop mid-reply and a
// new reply after it, multi-turn reuse of the KV cache, settings, failures shown as state.
package dev.pocket.chat

import dev.pocket.GenerationConfig
import dev.pocket.LlmModule
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.ByteArrayInputStream
import java.io.File
import java.nio.file.Path

class ChatSessionTest {
    private val golden = File(System.getProperty("pocket.golden.dir") ?: error("set -Dpocket.golden.dir"))
    private val model = File(golden, "tiny_llm.pocket").path
    private val tokenizer = File(golden, "tiny_llm.tokenizer.json").path
    private val greedy = ChatSettings(temperature = 0f, maxNewTokens = 40)

    private fun open() = LlmModule(model, tokenizer)

    private fun loaded(onState: (ChatState) -> Unit = {}): ChatSession = runBlocking {
        ChatSession(onState = onState).also {
            it.updateSettings(greedy)
            it.load { open() }
            assertEquals(ModelStatus.READY, it.state.model, it.state.error)
        }
    }

    @Test
    fun repliesStreamInOrderIntoTheLastMessage() = runBlocking {
        val seen = mutableListOf<String>()
        val session = loaded { s -> s.messages.lastOrNull()?.takeIf { it.streaming }?.let { seen += it.text } }
        session.send("Hi")
        val reply = session.state.messages.last()
        assertEquals(listOf(Role.USER, Role.ASSISTANT), session.state.messages.map { it.role })
        assertFalse(reply.streaming || reply.stopped || session.state.generating)
        // Each streamed state extends the one before; the last is the whole reply.
        for (i in 1 until seen.size) assertTrue(seen[i].startsWith(seen[i - 1]), "piece order broken at $i")
        assertEquals(reply.text, seen.last())
        val stats = reply.stats!!
        assertEquals(40, stats.tokens)
        assertTrue(stats.timeToFirstTokenMs > 0 && stats.tokensPerSecond > 0, "$stats")
        // The same text as the runner's own chat turn, collected without the session.
        open().use { llm ->
            val direct = StringBuilder()
            llm.chatFlow("Hi", GenerationConfig.builder().maxNewTokens(40).build()).collect { direct.append(it) }
            assertEquals(direct.toString(), reply.text)
        }
        session.close()
    }

    @Test
    fun stopEndsTheReplyAndTheNextOneWorks() = runBlocking {
        var updates = 0
        lateinit var session: ChatSession
        // Stop at the first streamed piece; the generating thread runs at most 16 pieces ahead.
        session = loaded { s -> if (s.generating && s.messages.last().text.isNotEmpty() && ++updates == 1) session.stop() }
        session.send("Hi")
        val stopped = session.state.messages.last()
        assertTrue(stopped.stopped && !stopped.streaming, "$stopped")
        // At most the 16 buffered pieces and the few in flight came after the stop.
        assertTrue(stopped.stats!!.tokens < 30, "stop did not end the reply early: ${stopped.stats}")
        assertNull(session.state.error)
        session.send("Again")
        val next = session.state.messages.last()
        assertEquals(4, session.state.messages.size)
        // The next reply runs to its end: 40 new tokens, or fewer when the 128-token context fills
        // (how much the stopped reply used depends on when the stop landed).
        assertFalse(next.stopped)
        assertNull(session.state.error)
        assertTrue(next.stats!!.tokens in 1..40, "${next.stats}")
        session.close()
    }

    @Test
    fun cancellingTheCollectingCoroutineStopsTheGeneration() = runBlocking {
        val session = loaded()
        val job = launch { session.send("Hi") }
        while (session.state.messages.lastOrNull()?.text.isNullOrEmpty()) yield()
        job.cancel()
        job.join()
        val reply = session.state.messages.last()
        assertTrue(reply.stopped && !reply.streaming, "$reply")
        session.send("Again")  // the runner is free again
        val next = session.state.messages.last()
        assertFalse(next.stopped)
        assertNull(session.state.error)
        assertTrue(next.stats!!.tokens in 1..40, "${next.stats}")
        session.close()
    }

    @Test
    fun aSecondTurnReusesTheCache() = runBlocking {
        // First turn: a long message (most of the 128-token context); second turn: a short one.
        // Re-prefilling the whole conversation must take longer than the second turn's prefill.
        val long = "the quick brown fox jumps over the lazy dog ".repeat(2)
        val second = mutableListOf<Double>()
        val whole = mutableListOf<Double>()
        open().use { llm ->
            val eight = GenerationConfig.builder().maxNewTokens(8).build()
            repeat(15) {
                llm.reset()
                val first = StringBuilder()
                llm.chatFlow(long, eight).collect { first.append(it) }
                val turn2 = llm.chatFlow("More", eight).collect { }
                second += turn2.ttftMs
                val again = llm.generateFlow(long + first + "More", GenerationConfig.builder().maxNewTokens(1).build()).collect { }
                whole += again.ttftMs
                assertTrue(turn2.promptTokens * 3 < again.promptTokens,
                    "turn 2 fed ${turn2.promptTokens} tokens, the whole conversation ${again.promptTokens}")
            }
        }
        val m2 = second.sorted()[second.size / 2]
        val mWhole = whole.sorted()[whole.size / 2]
        assertTrue(m2 < mWhole, "median time to first token: second turn $m2 ms, re-prefill $mWhole ms")
    }

    @Test
    fun settingsApply() = runBlocking {
        val session = loaded()
        session.send("Hi")
        val plain = session.state.messages.last().text
        session.updateSettings(greedy.copy(systemPrompt = "You are a pirate."))  // starts a new chat
        assertTrue(session.state.messages.isEmpty())
        session.send("Hi")
        assertTrue(session.state.messages.last().text != plain, "the system prompt changed nothing")
        session.updateSettings(greedy.copy(temperature = 1.2f, maxNewTokens = 5))  // no system prompt: a new chat
        // Sampling (a new random seed each reply) may pick the end token before the limit, even
        // first (an empty reply): every reply stays within 5 tokens and some of 4 replies reach it.
        val lengths = (1..4).map {
            session.send("Hi")
            session.state.messages.last().stats?.tokens ?: -1
        }
        assertTrue(lengths.all { it in 0..5 } && 5 in lengths, "reply lengths $lengths")
        session.close()
    }

    @Test
    fun failuresAreStateNotCrashes(@TempDir tmp: Path) = runBlocking {
        val session = ChatSession()
        session.updateSettings(greedy)
        session.load { LlmModule("/nonexistent/model.pocket", tokenizer) }
        assertEquals(ModelStatus.FAILED, session.state.model)
        assertTrue(session.state.error!!.contains("/nonexistent/model.pocket"), session.state.error)
        session.send("Hi")  // no model: ignored
        assertTrue(session.state.messages.isEmpty())

        val junk = tmp.resolve("junk.pocket").toFile().apply { writeText("this is not a model, just some text long enough for a header") }
        session.load { LlmModule(junk.path, tokenizer) }
        assertEquals(ModelStatus.FAILED, session.state.model)
        assertTrue(session.state.error!!.contains("not a .pocket file"), session.state.error)

        session.load { open() }
        assertEquals(ModelStatus.READY, session.state.model)
        assertNull(session.state.error)
        session.send("word ".repeat(200))  // longer than the 128-token context
        val failed = session.state.messages.last()
        assertFalse(failed.streaming)
        assertTrue(failed.error!!.contains("context"), failed.error)
        assertTrue(session.state.error!!.contains("context"), session.state.error)
        session.newChat()
        session.send("Hi")
        assertEquals(40, session.state.messages.last().stats!!.tokens)
        assertNull(session.state.messages.last().error)
        session.close()
    }

    @Test
    fun modelFilesCopyOnceWithProgress(@TempDir tmp: Path) {
        val bytes = File(model).readBytes()
        val dest = tmp.resolve("models/chat.pocket").toFile()
        val progress = mutableListOf<Float>()
        ModelFiles.copyOnce(ByteArrayInputStream(bytes), bytes.size.toLong(), dest) { progress += it }
        assertTrue(dest.readBytes().contentEquals(bytes))
        assertEquals(1f, progress.last())
        assertTrue(progress.zipWithNext().all { (a, b) -> a <= b }, "$progress")
        assertFalse(File(dest.path + ".part").exists())
        LlmModule(dest.path, tokenizer).use { assertEquals(128, it.maxSeqLen) }
        var read = false
        ModelFiles.copyOnce(object : java.io.InputStream() {
            override fun read(): Int { read = true; return -1 }
        }, bytes.size.toLong(), dest)
        assertFalse(read, "an existing copy of the right size is not copied again")
        val short = tmp.resolve("short.pocket").toFile()
        val e = runCatching { ModelFiles.copyOnce(ByteArrayInputStream(bytes, 0, 100), bytes.size.toLong(), short) }
        assertTrue(e.exceptionOrNull()?.message?.contains("copied 100 of") == true, "$e")
        assertFalse(short.exists() || File(short.path + ".part").exists())
    }
}
