// Instrumented tests: run on an emulator or a phone by the release workflow
// (`./gradlew connectedDebugAndroidTest`), against the model bundled as an asset by
// `pocket package --app android`. They cover what only a device has: the model mapped from inside
// the installed APK, the Flow adapter with real coroutines, and stop from another thread
// (ChatScreenTest: the chat surviving rotation).
package dev.pocket.demo.chat

import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import dev.pocket.GenerationConfig
import dev.pocket.LlmModule
import dev.pocket.android.PocketAndroid
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertThrows
import org.junit.Assert.assertTrue
import org.junit.Test
import org.junit.runner.RunWith
import java.io.IOException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

@RunWith(AndroidJUnit4::class)
class ChatAppTest {
    private val context get() = InstrumentationRegistry.getInstrumentation().targetContext

    private fun greedy(tokens: Int) = GenerationConfig.builder().maxNewTokens(tokens).temperature(0f).build()

    private fun <T> withModel(body: (LlmModule) -> T): T =
        PocketAndroid.loadLlmAsset(context, BuildConfig.MODEL_ASSET, null).use(body)

    @Test
    fun bundledModelLoadsFromTheApkAndAnswers() = withModel { llm ->
        val pieces = runBlocking { llm.chatPieces("Hello", greedy(16)).toList() }
        assertTrue("no pieces streamed", pieces.isNotEmpty())
        assertTrue("empty reply", pieces.joinToString("").isNotBlank())
    }

    @Test
    fun flowAndCallbackGiveTheSameText() = withModel { llm ->
        val viaFlow = runBlocking { llm.generatePieces("The sky is", greedy(12)).toList() }.joinToString("")
        llm.reset()
        val viaCallback = StringBuilder()
        llm.generate("The sky is", greedy(12)) { piece -> viaCallback.append(piece) }
        assertEquals(viaCallback.toString(), viaFlow)
    }

    @Test
    fun stopFromAnotherThreadEndsTheReplyAndTheRunnerStaysUsable() = withModel { llm ->
        val firstPiece = CountDownLatch(1)
        val stopper = Thread {
            firstPiece.await(60, TimeUnit.SECONDS)
            llm.stop()
        }.apply { start() }
        val stats = llm.chat("Tell me a long story.", greedy(200)) { firstPiece.countDown() }
        stopper.join()
        assertEquals("cancelled", stats.stopReason)
        assertTrue(stats.generatedTokens < 200)
        llm.reset()
        val after = StringBuilder()
        llm.generate("Hi", greedy(4)) { after.append(it) }
        assertFalse("runner unusable after stop", after.isEmpty())
    }

    @Test
    fun missingAssetIsAnErrorNamingIt() {
        val e = assertThrows(IOException::class.java) {
            PocketAndroid.loadLlmAsset(context, "no-such-model.pocket", null)
        }
        assertTrue(e.message, e.message!!.contains("no-such-model.pocket"))
    }
}
