// The chat screen: thin over ChatViewModel's ChatState. Messages stream in as they are written;
// the send button turns into a stop button while a reply is written; the status line shows time
// to first token and tokens/s; loading, copy progress and errors are visible.
package dev.pocket.demo.chat

import androidx.activity.compose.rememberLauncherForActivityResult
import androidx.activity.result.contract.ActivityResultContracts
import androidx.compose.foundation.background
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.imePadding
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.layout.widthIn
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.items
import androidx.compose.foundation.lazy.rememberLazyListState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.material.icons.Icons
import androidx.compose.material.icons.filled.Add
import androidx.compose.material.icons.filled.Refresh
import androidx.compose.material.icons.filled.Settings
import androidx.compose.material3.AlertDialog
import androidx.compose.material3.Button
import androidx.compose.material3.ExperimentalMaterial3Api
import androidx.compose.material3.Icon
import androidx.compose.material3.IconButton
import androidx.compose.material3.LinearProgressIndicator
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Scaffold
import androidx.compose.material3.Slider
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.material3.TopAppBar
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.saveable.rememberSaveable
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import dev.pocket.chat.ChatMessage
import dev.pocket.chat.ChatSettings
import dev.pocket.chat.ModelStatus
import dev.pocket.chat.Role

@OptIn(ExperimentalMaterial3Api::class)
@Composable
fun ChatScreen(vm: ChatViewModel) {
    val state = vm.state
    var showSettings by rememberSaveable { mutableStateOf(false) }
    val picker = rememberLauncherForActivityResult(ActivityResultContracts.OpenDocument()) { uri ->
        if (uri != null) vm.openModel(uri)
    }
    Scaffold(
        modifier = Modifier.imePadding(),
        topBar = {
            TopAppBar(
                title = { Text(stringResource(R.string.app_name)) },
                actions = {
                    IconButton(onClick = { picker.launch(arrayOf("*/*")) }) { Icon(Icons.Filled.Add, "Open a model") }
                    IconButton(onClick = vm::newChat, enabled = !state.generating) { Icon(Icons.Filled.Refresh, "New chat") }
                    IconButton(onClick = { showSettings = true }) { Icon(Icons.Filled.Settings, "Settings") }
                }
            )
        }
    ) { padding ->
        Column(Modifier.padding(padding).fillMaxSize()) {
            StatusBar(state.model, state.copyProgress, state.error, state.lastStats?.let {
                "%.0f ms to first token · %.1f tokens/s".format(it.timeToFirstTokenMs, it.tokensPerSecond)
            })
            Messages(state.messages, Modifier.weight(1f))
            InputRow(canSend = state.canSend, generating = state.generating, onSend = vm::send, onStop = vm::stop)
        }
    }
    if (showSettings) {
        SettingsDialog(state.settings, onDone = { vm.updateSettings(it); showSettings = false },
            onDismiss = { showSettings = false })
    }
}

@Composable
private fun StatusBar(model: ModelStatus, copyProgress: Float?, error: String?, stats: String?) {
    Column(Modifier.fillMaxWidth().padding(horizontal = 12.dp)) {
        when {
            copyProgress != null -> {
                Text("Copying the model…", style = MaterialTheme.typography.bodySmall)
                LinearProgressIndicator(progress = { copyProgress }, modifier = Modifier.fillMaxWidth())
            }
            model == ModelStatus.LOADING -> {
                Text("Loading the model…", style = MaterialTheme.typography.bodySmall)
                LinearProgressIndicator(Modifier.fillMaxWidth())
            }
            stats != null -> Text(stats, style = MaterialTheme.typography.bodySmall)
        }
        if (error != null) Text(error, color = MaterialTheme.colorScheme.error, style = MaterialTheme.typography.bodySmall)
        if (model == ModelStatus.FAILED) Text("Open a .pocket model with +", style = MaterialTheme.typography.bodySmall)
    }
}

@Composable
private fun Messages(messages: List<ChatMessage>, modifier: Modifier) {
    val list = rememberLazyListState()
    LaunchedEffect(messages.size, messages.lastOrNull()?.text?.length) {
        if (messages.isNotEmpty()) list.scrollToItem(messages.size - 1)
    }
    LazyColumn(modifier.fillMaxWidth(), state = list, verticalArrangement = Arrangement.spacedBy(8.dp)) {
        items(messages) { m -> Bubble(m) }
    }
}

@Composable
private fun Bubble(m: ChatMessage) {
    val mine = m.role == Role.USER
    Box(Modifier.fillMaxWidth().padding(horizontal = 12.dp), contentAlignment = if (mine) Alignment.CenterEnd else Alignment.CenterStart) {
        Column(
            Modifier.widthIn(max = 320.dp)
                .background(
                    if (mine) MaterialTheme.colorScheme.primaryContainer else MaterialTheme.colorScheme.surfaceVariant,
                    RoundedCornerShape(12.dp)
                )
                .padding(10.dp)
        ) {
            Text(if (m.streaming && m.text.isEmpty()) "…" else m.text)
            val note = when {
                m.error != null -> m.error
                m.stopped -> "stopped"
                else -> null
            }
            if (note != null) Text(note, style = MaterialTheme.typography.labelSmall, color = MaterialTheme.colorScheme.error)
        }
    }
}

@Composable
private fun InputRow(canSend: Boolean, generating: Boolean, onSend: (String) -> Unit, onStop: () -> Unit) {
    var text by rememberSaveable { mutableStateOf("") }
    Row(Modifier.fillMaxWidth().padding(8.dp), verticalAlignment = Alignment.CenterVertically) {
        OutlinedTextField(text, { text = it }, Modifier.weight(1f), placeholder = { Text("Message") }, maxLines = 5)
        if (generating) {
            Button(onClick = onStop, Modifier.padding(start = 8.dp)) { Text("Stop") }
        } else {
            Button(onClick = { onSend(text); text = "" }, Modifier.padding(start = 8.dp), enabled = canSend && text.isNotBlank()) {
                Text("Send")
            }
        }
    }
}

@Composable
private fun SettingsDialog(settings: ChatSettings, onDone: (ChatSettings) -> Unit, onDismiss: () -> Unit) {
    var system by rememberSaveable { mutableStateOf(settings.systemPrompt) }
    var temperature by rememberSaveable { mutableStateOf(settings.temperature) }
    AlertDialog(
        onDismissRequest = onDismiss,
        title = { Text("Settings") },
        text = {
            Column {
                OutlinedTextField(system, { system = it }, label = { Text("System prompt (a change starts a new chat)") })
                Text("Temperature %.2f".format(temperature), Modifier.padding(top = 12.dp))
                Slider(temperature, { temperature = it }, valueRange = 0f..1.5f)
            }
        },
        confirmButton = { TextButton(onClick = { onDone(settings.copy(systemPrompt = system, temperature = temperature)) }) { Text("Done") } },
        dismissButton = { TextButton(onClick = onDismiss) { Text("Cancel") } }
    )
}
