// The state a chat screen shows: plain values, so a SwiftUI view renders whatever it is given.
import Foundation

public enum Role: Sendable { case user, assistant }

/// Time to first token (prefill included) and decode speed of one reply.
public struct TurnStats: Sendable, Equatable {
  public var timeToFirstTokenMs: Double
  public var tokensPerSecond: Double
  public var tokens: Int
}

public struct ChatMessage: Sendable, Equatable, Identifiable {
  public let id = UUID()
  public var role: Role
  public var text: String
  /// The assistant message being written right now.
  public var streaming = false
  /// The user pressed stop before the reply ended.
  public var stopped = false
  /// Set on a finished assistant message.
  public var stats: TurnStats?
  /// Why this reply failed, if it did (the text keeps what came before).
  public var error: String?

  public init(role: Role, text: String, streaming: Bool = false) {
    self.role = role
    self.text = text
    self.streaming = streaming
  }
}

/// What the user can change; a new system prompt starts a new conversation.
public struct ChatSettings: Sendable, Equatable {
  public var systemPrompt = ""
  /// 0 = greedy (the same reply every time).
  public var temperature: Float = 0.7
  public var maxNewTokens = 512

  public init(systemPrompt: String = "", temperature: Float = 0.7, maxNewTokens: Int = 512) {
    self.systemPrompt = systemPrompt
    self.temperature = temperature
    self.maxNewTokens = maxNewTokens
  }
}

public enum ModelStatus: Sendable, Equatable { case notLoaded, loading, ready, failed }

public struct ChatState: Sendable, Equatable {
  public var model = ModelStatus.notLoaded
  /// A file copy's progress (0...1) while a picked model is copied into app storage.
  public var copyProgress: Double?
  public var messages: [ChatMessage] = []
  public var settings = ChatSettings()
  /// The last failure (loading, a reply), shown until the next action.
  public var error: String?

  public init() {}

  public var generating: Bool { messages.last?.streaming == true }
  public var canSend: Bool { model == .ready && !generating }
  /// Statistics of the latest finished reply, for the status line.
  public var lastStats: TurnStats? { messages.last { $0.stats != nil }?.stats }
}
