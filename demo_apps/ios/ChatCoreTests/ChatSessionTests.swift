// ChatSession and ModelFiles against the real runtime and the golden tiny LLM
// (tests/golden/tiny_llm.pocket + tiny_llm.tokenizer.json): streaming order, stop mid-reply and a
// new reply after it, multi-turn reuse of the KV cache, settings, failures shown as state.
import Foundation
import Pocket
import PocketChatCore
import XCTest

@MainActor
final class ChatSessionTests: XCTestCase {
  static let golden: String = {
    if let d = ProcessInfo.processInfo.environment["POCKET_GOLDEN_DIR"], !d.isEmpty { return d }
    // Up from this file (compiled as demo_apps/ios/... or bindings/swift/Tests/... through a
    // symlink) to the folder that holds tests/golden.
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/", !FileManager.default.fileExists(atPath: url.path + "/tests/golden/tiny_llm.pocket") {
      url.deleteLastPathComponent()
    }
    return url.appendingPathComponent("tests/golden").path
  }()
  let model = golden + "/tiny_llm.pocket"
  let tokenizer = golden + "/tiny_llm.tokenizer.json"
  let greedy = ChatSettings(temperature: 0, maxNewTokens: 40)

  private func loaded(_ onChange: @escaping (ChatState) -> Void = { _ in }) async -> ChatSession {
    let session = ChatSession(onChange: onChange)
    session.updateSettings(greedy)
    let (model, tokenizer) = (self.model, self.tokenizer)
    await session.load { try TextRunner(modelPath: model, tokenizerPath: tokenizer) }
    XCTAssertEqual(session.state.model, .ready, session.state.error ?? "")
    return session
  }

  func testRepliesStreamInOrderIntoTheLastMessage() async throws {
    var seen: [String] = []
    let session = await loaded { state in
      if let last = state.messages.last, last.streaming { seen.append(last.text) }
    }
    await session.send("Hi")
    let reply = try XCTUnwrap(session.state.messages.last)
    XCTAssertEqual(session.state.messages.map(\.role), [.user, .assistant])
    XCTAssertFalse(reply.streaming || reply.stopped || session.state.generating)
    for i in seen.indices.dropFirst() { XCTAssertTrue(seen[i].hasPrefix(seen[i - 1]), "piece order broken at \(i)") }
    XCTAssertEqual(seen.last, reply.text)
    let stats = try XCTUnwrap(reply.stats)
    XCTAssertEqual(stats.tokens, 40)
    XCTAssertGreaterThan(stats.timeToFirstTokenMs, 0)
    XCTAssertGreaterThan(stats.tokensPerSecond, 0)
    // The same text as the runner's own chat turn.
    let direct = try TextRunner(modelPath: model, tokenizerPath: tokenizer).chat("Hi", config: .init(maxNewTokens: 40))
    XCTAssertEqual(direct, reply.text)
  }

  /// Stops at the first piece the main actor sees. The generating thread runs at most 16 pieces
  /// ahead of the reader (TextRunner.streamAhead), so the stop lands well before the 60th token
  /// however fast the tiny model is.
  func testStopEndsTheReplyAndTheNextOneWorks() async throws {
    var session: ChatSession?
    var armed = true
    session = await loaded { state in
      if armed, state.generating, !(state.messages.last?.text.isEmpty ?? true) {
        armed = false
        session?.stop()
      }
    }
    let s = try XCTUnwrap(session)
    // A stopped reply (< 60 tokens) leaves room for the next turn in the 128-token context:
    // 19 prompt tokens + at most 30 + 24 for the next prompt + 10.
    s.updateSettings(ChatSettings(temperature: 0, maxNewTokens: 60))
    await s.send("Hi")
    XCTAssertFalse(armed, "no piece was streamed")
    let reply = try XCTUnwrap(s.state.messages.last)
    XCTAssertFalse(reply.streaming)
    XCTAssertTrue(reply.stopped, "stop did not end the reply")
    // The 16 buffered pieces and the few in flight came after the stop.
    let stopped = try XCTUnwrap(reply.stats?.tokens)
    XCTAssertLessThan(stopped, 30, "stop did not end the reply early")
    s.updateSettings(ChatSettings(temperature: 0, maxNewTokens: 10))
    await s.send("Again")  // the runner is free again, in the same conversation
    let next = try XCTUnwrap(s.state.messages.last)
    XCTAssertEqual(s.state.messages.count, 4)
    XCTAssertFalse(next.stopped)
    XCTAssertNil(next.error)
    // Up to 10 tokens: where the stop landed decides the conversation, and after some stopped
    // replies the tiny model ends this turn early (end of text after 1 or 6 tokens).
    let tokens = try XCTUnwrap(next.stats?.tokens)
    XCTAssertTrue((1...10).contains(tokens), "\(tokens) tokens")
  }

  /// The tiny model can write its whole reply before the generation thread sees the cancel, so
  /// the turn's length is left open; either way the next turn must fit the 128-token context.
  func testCancellingTheTaskStopsTheReply() async throws {
    let session = await loaded()
    session.updateSettings(ChatSettings(temperature: 0, maxNewTokens: 60))
    let task = Task { await session.send("Hi") }
    task.cancel()
    await task.value
    XCTAssertFalse(session.state.generating)
    let first = try XCTUnwrap(session.state.messages.last)
    XCTAssertFalse(first.streaming)
    XCTAssertTrue(first.stopped)  // the Task was cancelled before it ran (both on the main actor)
    session.updateSettings(ChatSettings(temperature: 0, maxNewTokens: 10))
    await session.send("Again")  // never BUSY: send waited for the generation to end
    XCTAssertNil(session.state.messages.last?.error)
    XCTAssertGreaterThan(session.state.messages.last?.stats?.tokens ?? 0, 0)
  }

  func testASecondTurnReusesTheCache() throws {
    // First turn: a long message (most of the 128-token context); second turn: a short one.
    // Re-prefilling the whole conversation must take longer than the second turn's prefill.
    let runner = try TextRunner(modelPath: model, tokenizerPath: tokenizer)
    let long = String(repeating: "the quick brown fox jumps over the lazy dog ", count: 2)
    var second: [Double] = []
    var whole: [Double] = []
    for _ in 0..<15 {
      runner.reset()
      let first = try runner.chat(long, config: .init(maxNewTokens: 8))
      try runner.chat("More", config: .init(maxNewTokens: 8))
      let turn2 = runner.stats
      try runner.generate(long + first + "More", config: .init(maxNewTokens: 1))
      let again = runner.stats
      XCTAssertLessThan(turn2.promptTokens * 3, again.promptTokens)
      second.append(turn2.timeToFirstTokenMs)
      whole.append(again.timeToFirstTokenMs)
    }
    let median = { (xs: [Double]) in xs.sorted()[xs.count / 2] }
    XCTAssertLessThan(median(second), median(whole), "median time to first token: second turn vs re-prefill")
  }

  func testSettingsApply() async throws {
    let session = await loaded()
    await session.send("Hi")
    let plain = session.state.messages.last?.text
    session.updateSettings(ChatSettings(systemPrompt: "You are a pirate.", temperature: 0, maxNewTokens: 40))
    XCTAssertTrue(session.state.messages.isEmpty, "a new system prompt starts a new chat")
    await session.send("Hi")
    XCTAssertNotEqual(session.state.messages.last?.text, plain, "the system prompt changed nothing")
    session.updateSettings(ChatSettings(systemPrompt: "You are a pirate.", temperature: 1.2, maxNewTokens: 5))
    XCTAssertEqual(session.state.messages.count, 2, "same system prompt: the chat goes on")
    // Sampling (a new random seed each reply) may pick the end token before the limit, even
    // first (an empty reply), and the tiny model's 128-token context is nearly full by now: in
    // a new chat, every reply stays within 5 tokens and some of 4 replies reach it.
    session.newChat()
    var lengths: [Int] = []
    for _ in 0..<4 {
      await session.send("Hi")
      lengths.append(session.state.messages.last?.stats?.tokens ?? -1)
    }
    XCTAssertTrue(lengths.allSatisfy { (0...5).contains($0) } && lengths.contains(5), "reply lengths \(lengths)")
  }

  func testFailuresAreStateNotCrashes() async throws {
    let session = ChatSession()
    session.updateSettings(greedy)
    let tokenizer = self.tokenizer
    await session.load { try TextRunner(modelPath: "/nonexistent/model.pocket", tokenizerPath: tokenizer) }
    XCTAssertEqual(session.state.model, .failed)
    XCTAssertTrue(session.state.error?.contains("/nonexistent/model.pocket") ?? false, session.state.error ?? "")
    await session.send("Hi")  // no model: ignored
    XCTAssertTrue(session.state.messages.isEmpty)

    let junk = NSTemporaryDirectory() + "/junk-\(UUID().uuidString).pocket"
    try Data("this is not a model, just some text long enough for a header".utf8).write(to: URL(fileURLWithPath: junk))
    defer { try? FileManager.default.removeItem(atPath: junk) }
    await session.load { try TextRunner(modelPath: junk, tokenizerPath: tokenizer) }
    XCTAssertEqual(session.state.model, .failed)
    XCTAssertTrue(session.state.error?.contains("not a .pocket file") ?? false, session.state.error ?? "")

    let model = self.model
    await session.load { try TextRunner(modelPath: model, tokenizerPath: tokenizer) }
    XCTAssertEqual(session.state.model, .ready)
    XCTAssertNil(session.state.error)
    await session.send(String(repeating: "word ", count: 200))  // longer than the 128-token context
    let failed = try XCTUnwrap(session.state.messages.last)
    XCTAssertFalse(failed.streaming)
    XCTAssertTrue(failed.error?.contains("context") ?? false, failed.error ?? "")
    XCTAssertTrue(session.state.error?.contains("context") ?? false)
    session.newChat()
    await session.send("Hi")
    XCTAssertNil(session.state.messages.last?.error)
    XCTAssertEqual(session.state.messages.last?.stats?.tokens, 40)
  }

  func testModelFilesCopyOnceWithProgress() throws {
    let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("chatcore-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: dir) }
    let dest = dir.appendingPathComponent("models/chat.pocket")
    var progress: [Double] = []
    try ModelFiles.copyOnce(from: URL(fileURLWithPath: model), to: dest) { progress.append($0) }
    XCTAssertEqual(try Data(contentsOf: dest), try Data(contentsOf: URL(fileURLWithPath: model)))
    XCTAssertEqual(progress.last, 1)
    XCTAssertEqual(progress, progress.sorted())
    XCTAssertFalse(FileManager.default.fileExists(atPath: dest.path + ".part"))
    XCTAssertEqual(try TextRunner(modelPath: dest.path, tokenizerPath: tokenizer).maxSeqLen, 128)
    var calls = 0
    try ModelFiles.copyOnce(from: URL(fileURLWithPath: model), to: dest) { _ in calls += 1 }
    XCTAssertEqual(calls, 1, "an existing copy of the right size is not copied again")
    XCTAssertThrowsError(try ModelFiles.copyOnce(from: dir.appendingPathComponent("missing"), to: dest))
  }
}
