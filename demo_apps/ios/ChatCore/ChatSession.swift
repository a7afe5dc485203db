// The chat logic under the screen, with no UI: load a model, send a message and stream the reply
// (TextRunner's AsyncSequence) into the last message, stop it, change settings, start over.
// Every change is a new ChatState handed to `onChange`; a failure is state (ChatState.error),
// never a crash.
//
//   let session = ChatSession { state in viewModel.state = state }
//   await session.load { try TextRunner(modelPath: path) }
//   await session.send("Hello!")       // returns when the reply has ended
//   session.stop()                     // the stop button
//
// The session lives on the main actor (the views' thread); generation runs on TextRunner's own
// thread. Cancelling the Task that runs send() stops the generation too.
import Foundation
import Pocket

@MainActor
public final class ChatSession {
  public private(set) var state = ChatState() {
    didSet { onChange(state) }
  }
  private let onChange: (ChatState) -> Void
  private var runner: TextRunner?

  public init(onChange: @escaping (ChatState) -> Void = { _ in }) {
    self.onChange = onChange
  }

  /// Loads the runner that `open` returns (off the main actor); any failure becomes state.
  public func load(_ open: @escaping @Sendable () throws -> TextRunner) async {
    runner = nil
    state.model = .loading
    state.error = nil
    state.messages = []
    do {
      let loaded = try await Task.detached(priority: .userInitiated) { try open() }.value
      runner = loaded
      applySystemPrompt(loaded)
      state.model = .ready
    } catch {
      state.model = .failed
      state.error = "Could not load the model: \(describe(error))"
    }
  }

  /// Shows the progress of a model file being copied (see `ModelFiles.copyOnce`); nil when done.
  public func showCopyProgress(_ fraction: Double?) {
    state.copyProgress = fraction
  }

  /// Sends `text` and streams the reply into a new assistant message, which ends with its stats,
  /// stopped, or with an error. Ignored while a reply is being written or without a model.
  public func send(_ text: String) async {
    guard let runner, state.canSend, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
    state.error = nil
    state.messages += [ChatMessage(role: .user, text: text), ChatMessage(role: .assistant, text: "", streaming: true)]
    var reply = ""
    do {
      for try await piece in runner.chatStream(text, config: config()) {
        reply += piece
        updateReply { $0.text = reply }
      }
      // A cancelled Task ends the loop at once while the generation thread finishes its token.
      let stats = await Task.detached { Self.endedStats(runner) }.value
      let cancelled = Task.isCancelled || stats.stopReason == .cancelled
      updateReply {
        $0.streaming = false
        $0.stopped = cancelled
        $0.stats = TurnStats(timeToFirstTokenMs: stats.timeToFirstTokenMs,
                             tokensPerSecond: stats.decodeTokensPerSecond, tokens: stats.generatedTokens)
      }
    } catch {
      updateReply {
        $0.streaming = false
        $0.error = describe(error)
      }
      state.error = describe(error)
    }
  }

  /// The stop button: ends the reply being written after its current token.
  public func stop() {
    runner?.stop()
  }

  /// New settings; a changed system prompt starts a new conversation (it opens one).
  public func updateSettings(_ settings: ChatSettings) {
    let promptChanged = settings.systemPrompt != state.settings.systemPrompt
    state.settings = settings
    if promptChanged { newChat() }
  }

  /// Forgets the conversation (the KV cache too).
  public func newChat() {
    state.messages = []
    state.error = nil
    if let runner {
      runner.reset()
      applySystemPrompt(runner)
    }
  }

  /// The runner's stats once its generation has ended (they carry a stop reason then).
  nonisolated private static func endedStats(_ runner: TextRunner) -> GenerationStats {
    for _ in 0..<5000 where runner.stats.stopReason == nil { usleep(1000) }
    return runner.stats
  }

  private func config() -> GenerationConfig {
    let s = state.settings
    return GenerationConfig(maxNewTokens: s.maxNewTokens, temperature: s.temperature,
                            topP: s.temperature > 0 ? 0.95 : 1, seed: UInt64.random(in: 0...UInt64.max))
  }

  private func applySystemPrompt(_ runner: TextRunner) {
    // Empty: the model's own default system prompt.
    if !state.settings.systemPrompt.isEmpty { runner.systemPrompt = state.settings.systemPrompt }
  }

  private func updateReply(_ change: (inout ChatMessage) -> Void) {
    guard !state.messages.isEmpty else { return }
    change(&state.messages[state.messages.count - 1])
  }

  private func describe(_ error: Error) -> String {
    (error as? PocketError)?.description ?? error.localizedDescription
  }
}
