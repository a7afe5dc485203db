// Instrumented UI test (release workflow, `./gradlew connectedDebugAndroidTest`): a chat turn through
// the screen with the bundled model, then an activity re-creation (what rotation does) keeps it.
package dev.pocket.demo.chat

import androidx.compose.ui.test.hasSetTextAction
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.isEnabled
import androidx.compose.ui.test.junit4.createAndroidComposeRule
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performTextInput
import androidx.test.ext.junit.runners.AndroidJUnit4
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith

@RunWith(AndroidJUnit4::class)
class ChatScreenTest {
    @get:Rule val compose = createAndroidComposeRule<MainActivity>()

    @Test
    fun chatSurvivesRotation() {
        // Send is shown (disabled) while the model loads; it enables once text is typed into a ready chat.
        compose.onNode(hasSetTextAction()).performTextInput("Hi")
        compose.waitUntil(120_000) {
            compose.onAllNodes(hasText("Send") and isEnabled()).fetchSemanticsNodes().isNotEmpty()
        }
        compose.onNodeWithText("Send").performClick()
        // The reply is done when Send comes back (Stop shows while it is written).
        compose.waitUntil(120_000) {
            compose.onAllNodes(hasText("Send")).fetchSemanticsNodes().isNotEmpty()
        }
        compose.activityRule.scenario.recreate()
        compose.waitUntil(30_000) { compose.onAllNodes(hasText("Hi")).fetchSemanticsNodes().isNotEmpty() }
        compose.onNodeWithText("Hi").assertExists()
    }
}
