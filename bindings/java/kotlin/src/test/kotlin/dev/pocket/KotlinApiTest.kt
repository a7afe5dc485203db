package dev.pocket

import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.IOException

/** The API as Kotlin sees it: extensions, named-argument configs, `use {}`, lambdas as callbacks. */
class KotlinApiTest {
    private val golden = Golden.greedy()

    @Test
    fun generationConfigWithNamedArguments() {
        val c = GenerationConfig(maxNewTokens = 64, temperature = 0.7f, stopStrings = listOf("\n"))
        assertEquals(64, c.maxNewTokens)
        assertEquals(0.7f, c.temperature)
        assertEquals(listOf("\n"), c.stopStrings)
        assertEquals(256, GenerationConfig().maxNewTokens)
        val d = c.copy(topK = 5)
        assertEquals(5, d.topK)
        assertEquals(64, d.maxNewTokens)
        assertThrows(IllegalArgumentException::class.java) { GenerationConfig(topP = 0f) }
        assertThrows(IllegalArgumentException::class.java) { c.copy(maxNewTokens = -1) }
    }

    @Test
    fun tensorsFromArrays() {
        val t = floatArrayOf(1f, 2f, 3f, 4f, 5f, 6f).toTensor(2, 3)
        assertArrayEquals(longArrayOf(2, 3), t.shape)
        assertEquals(DType.FLOAT32, t.dtype)
        assertArrayEquals(longArrayOf(6), intArrayOf(1, 2, 3, 4, 5, 6).toTensor().shape)
        assertEquals(DType.INT64, longArrayOf(1).toTensor(1, 1).dtype)
        assertEquals(DType.INT8, byteArrayOf(1).toTensor().dtype)
        assertEquals(DType.INT16, shortArrayOf(1).toTensor().dtype)
        assertEquals(DType.FLOAT64, doubleArrayOf(1.0).toTensor().dtype)
        assertTrue(t.toEValue().isTensor)
        assertThrows(IllegalArgumentException::class.java) { floatArrayOf(1f).toTensor(2) }
        assertThrows(IllegalStateException::class.java) { t.dataAsIntArray }
    }

    @Test
    fun forwardOnTensorsWithUse() {
        val io = Golden.readIo("mlp.forward.io")
        val input = io.inputs[0].dataAsFloatArray.toTensor(*io.inputs[0].shape)
        val module = Module.load(Golden.path("mlp.pocket"))
        module.use { m ->
            val out = m.forward(input)
            Golden.assertClose(io.outputs[0], out[0], "mlp via Kotlin")
            Golden.assertClose(io.outputs[0], m.execute("forward", input)[0], "mlp via execute")
            // The member forward(vararg EValue) is still there.
            Golden.assertClose(io.outputs[0], m.forward(EValue.from(input))[0].toTensor(), "mlp via EValue")
            assertEquals(listOf("forward"), m.methodNames.filter { it == "forward" })
            val missing: String? = m.getMetadata("no such key")  // @Nullable reaches Kotlin as String?
            assertEquals(null, missing)
        }
        assertTrue(module.isClosed)
        assertThrows(IllegalStateException::class.java) { module.forward(input) }
    }

    @Test
    fun llmTextHelpersAndLambdas() {
        LlmModule(Golden.llmModel(), Golden.llmTokenizer()).use { llm ->
            val config = GenerationConfig(maxNewTokens = golden.greedyIds.size)
            assertArrayEquals(golden.greedyIds, llm.generateIds(golden.promptIds, config))
            val expected = llm.decode(golden.greedyIds)
            assertEquals(expected, llm.generateText(golden.promptText, config))

            val streamed = StringBuilder()
            llm.generate(golden.promptText, config) { piece -> streamed.append(piece) }
            assertEquals(expected, streamed.toString())

            var stats: LlmStats? = null
            llm.generate(golden.promptText, config, llmCallback(onStats = { stats = it }) { })
            assertEquals("max_new_tokens", stats!!.stopReason)
            assertEquals(golden.greedyIds.size, stats!!.generatedTokens)

            val four = GenerationConfig(maxNewTokens = 4)
            llm.setSystemPrompt(null)  // @Nullable parameter
            llm.reset()
            val first = llm.chatText("Hi", four)
            val position = llm.position
            llm.chatText("More", four)
            assertTrue(llm.position > position + 4)
            llm.reset()
            assertEquals(first, llm.chatText("Hi", four))
        }
    }

    @Test
    fun checkedExceptionFromACallbackIsRethrownAsIs() {
        LlmModule(Golden.llmModel(), Golden.llmTokenizer()).use { llm ->
            val failure = IOException("disk full")
            val thrown = assertThrows(IOException::class.java) {
                llm.generate(golden.promptText, GenerationConfig(maxNewTokens = 8)) { throw failure }
            }
            assertSame(failure, thrown)
            assertEquals("cancelled", llm.stats.stopReason)
        }
    }
}
