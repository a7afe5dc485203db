// TextRunner on the golden tiny LLM (random weights, ChatML template): greedy ids equal eager
// PyTorch's, streamed text equals decode(ids) (closure and async forms), stopping from another
// thread, chat turns, and every error path.
import Foundation
import XCTest

@testable import Pocket

final class TextRunnerTests: XCTestCase {
  private func makeRunner() throws -> TextRunner {
    try TextRunner(modelPath: Golden.llm, tokenizerPath: Golden.llmTokenizer)
  }

  // ---- golden generation -------------------------------------------------------------------

  func testGreedyIdsMatchPyTorch() throws {
    let golden = try Golden.greedy()
    XCTAssertFalse(golden.greedyIds.isEmpty)
    let runner = try makeRunner()
    let ids = try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: golden.greedyIds.count))
    XCTAssertEqual(ids, golden.greedyIds)
    XCTAssertEqual(runner.stats.generatedTokens, golden.greedyIds.count)
    XCTAssertEqual(runner.stats.promptTokens, golden.promptIds.count)
    XCTAssertEqual(runner.stats.stopReason, .maxNewTokens)
    // A second call starts over and gives the same ids.
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: golden.greedyIds.count)), ids)
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: 0)), [])
  }

  func testTokenizer() throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    XCTAssertEqual(try runner.encode(golden.promptText), golden.promptIds)
    XCTAssertEqual(try runner.decode(golden.promptIds), golden.promptText)
    let text = "naïve café — 東京 🙂, def add(a, b):\n    return a + b"
    XCTAssertEqual(try runner.decode(try runner.encode(text)), text)
    XCTAssertEqual(try runner.encode(""), [])
    XCTAssertEqual(try runner.decode([]), "")
    let long = String(repeating: "🙂", count: 500)  // more ids than bytes/4 and decoded text > 8 bytes per id
    XCTAssertEqual(try runner.decode(try runner.encode(long)), long)
    XCTAssertEqual(runner.vocabSize, Int(try Module(path: Golden.llm).metadata["vocab_size"] ?? ""))
    XCTAssertEqual(runner.maxSeqLen, 128)
  }

  func testStreamedTextEqualsDecodedIds() throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    var pieces: [String] = []
    let text = try runner.generate(golden.promptText, config: .init(maxNewTokens: golden.greedyIds.count)) {
      pieces.append($0)
    }
    XCTAssertEqual(pieces.joined(), text)
    XCTAssertEqual(text, try runner.decode(golden.greedyIds))
    XCTAssertGreaterThan(pieces.count, 1)
    let stats = runner.stats
    XCTAssertEqual(stats.generatedTokens, golden.greedyIds.count)
    XCTAssertGreaterThan(stats.timeToFirstTokenMs, 0)
    XCTAssertGreaterThan(stats.decodeTokensPerSecond, 0)
    XCTAssertGreaterThan(stats.loadMs, 0)
    XCTAssertEqual(stats.stopReason, .maxNewTokens)
    XCTAssertTrue(stats.description.contains("generated \(golden.greedyIds.count) tokens"), stats.description)
  }

  func testAsyncStream() async throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    var text = ""
    for try await piece in runner.stream(golden.promptText, config: .init(maxNewTokens: golden.greedyIds.count)) {
      text += piece
    }
    XCTAssertEqual(text, try runner.decode(golden.greedyIds))
    XCTAssertEqual(runner.stats.stopReason, .maxNewTokens)
  }

  func testAsyncStreamStopsWhenTheConsumerLeaves() async throws {
    let runner = try makeRunner()
    var count = 0
    for try await _ in runner.stream("Once upon a time", config: .init(maxNewTokens: 100)) {
      count += 1
      if count == 2 { break }
    }
    // The generating thread notices within a token; the runner then takes the next call.
    let ids = try runner.generateIds(try runner.encode("Once"), config: .init(maxNewTokens: 3))
    XCTAssertEqual(ids.count, 3)
    XCTAssertEqual(count, 2)
  }

  func testAsyncStreamWaitsForASlowReader() async throws {
    let config = GenerationConfig(maxNewTokens: 60)  // "Hi" gets 60 tokens without an end of text
    var pieces: [String] = []
    let whole = try makeRunner().chat("Hi", config: config) { pieces.append($0) }
    XCTAssertGreaterThan(pieces.count, TextRunner.streamAhead + 4)
    let runner = try makeRunner()
    var it = runner.chatStream("Hi", config: config).makeAsyncIterator()
    var text = try await it.next() ?? ""
    // Unread, the tiny model would write all 60 tokens in a few milliseconds; the generating
    // thread waits for the reader instead, so after 200 ms it has not ended.
    try await Task.sleep(nanoseconds: 200_000_000)
    XCTAssertNil(runner.stats.stopReason, "the generation ran ahead of its reader")
    while let piece = try await it.next() { text += piece }
    XCTAssertEqual(text, whole)  // no piece lost while the buffer was full
    XCTAssertEqual(runner.stats.stopReason, .maxNewTokens)
    // Stopped while the buffer is full: the stop lands within the buffered pieces.
    runner.reset()
    var stopped = runner.chatStream("Hi", config: config).makeAsyncIterator()
    _ = try await stopped.next()
    try await Task.sleep(nanoseconds: 50_000_000)
    runner.stop()
    var after = 0
    while try await stopped.next() != nil { after += 1 }
    XCTAssertLessThanOrEqual(after, TextRunner.streamAhead + 2)
    XCTAssertEqual(runner.stats.stopReason, .cancelled)
  }

  func testAsyncStreamThrowsRuntimeErrors() async throws {
    let runner = try makeRunner()
    do {
      for try await _ in runner.stream("Hello", config: .init(temperature: -1)) { XCTFail("no piece expected") }
      XCTFail("expected an error")
    } catch let e as PocketError {
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("temperature"), e.message)
    }
  }

  func testChatStream() async throws {
    let a = try makeRunner()
    let b = try makeRunner()
    let config = GenerationConfig(maxNewTokens: 6)
    var streamed = ""
    for try await piece in a.chatStream("Hi", config: config) { streamed += piece }
    XCTAssertEqual(streamed, try b.chat("Hi", config: config))
    XCTAssertEqual(a.position, b.position)
  }

  // ---- stopping ----------------------------------------------------------------------------

  func testStopFromAnotherThread() throws {
    let runner = try makeRunner()
    let stopped = DispatchSemaphore(value: 0)
    var pieces = 0
    let text = try runner.generate("Once upon a time", config: .init(maxNewTokens: 100)) { _ in
      pieces += 1
      if pieces == 3 {
        // Another thread stops the runner while this generation runs; wait until it has.
        Thread.detachNewThread {
          runner.stop()
          stopped.signal()
        }
        stopped.wait()
      }
    }
    XCTAssertEqual(runner.stats.stopReason, .cancelled)
    XCTAssertLessThanOrEqual(pieces, 4)  // a last piece may flush bytes held back
    XCTAssertFalse(text.isEmpty)
    XCTAssertLessThan(runner.stats.generatedTokens, 100)
    // stop() does not carry over to the next generation.
    XCTAssertEqual(try runner.generateIds(try runner.encode("Once"), config: .init(maxNewTokens: 5)).count, 5)
    runner.stop()  // nothing running: no effect
    XCTAssertEqual(try runner.generateIds(try runner.encode("Once"), config: .init(maxNewTokens: 5)).count, 5)
  }

  func testStopWhileGeneratingOnABackgroundThread() throws {
    let runner = try makeRunner()
    let firstPiece = DispatchSemaphore(value: 0)
    let stopCalled = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let result = Box<Result<String, Error>>()
    let seen = Box<Int>()
    Thread.detachNewThread {
      result.value = Result {
        try runner.generate("Once upon a time", config: .init(maxNewTokens: 120)) { _ in
          seen.value = (seen.value ?? 0) + 1
          if seen.value == 1 {
            firstPiece.signal()
            _ = stopCalled.wait(timeout: .now() + 30)  // hold the generation until stop() has landed
          }
        }
      }
      done.signal()
    }
    firstPiece.wait()
    runner.stop()  // from this thread, while the other one generates
    stopCalled.signal()
    XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
    XCTAssertFalse(try XCTUnwrap(result.value).get().isEmpty)
    XCTAssertEqual(runner.stats.stopReason, .cancelled)
    XCTAssertLessThanOrEqual(seen.value ?? 0, 2)
    // The runner is usable right after, with the golden result.
    let golden = try Golden.greedy()
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: golden.greedyIds.count)),
                   golden.greedyIds)
  }

  func testThrowingClosureStopsAndRethrows() throws {
    struct Enough: Error {}
    let runner = try makeRunner()
    var pieces = 0
    XCTAssertThrowsError(try runner.generate("Once upon a time", config: .init(maxNewTokens: 50)) { _ in
      pieces += 1
      if pieces == 2 { throw Enough() }
    }) { XCTAssertTrue($0 is Enough, "\($0)") }
    XCTAssertEqual(pieces, 2)
    XCTAssertEqual(runner.stats.stopReason, .cancelled)
  }

  func testStopStringEndsTheText() throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    let full = try runner.decode(golden.greedyIds)
    // Stop at two ASCII letters in the second half of the greedy continuation (random weights
    // also produce invalid UTF-8, which Swift shows as U+FFFD and the runtime never sees).
    let chars = Array(full)
    let at = try XCTUnwrap((chars.count / 2..<chars.count - 1).first {
      chars[$0].isASCII && chars[$0].isLetter && chars[$0 + 1].isASCII && chars[$0 + 1].isLetter
    }, "no ASCII pair in '\(full)'")
    let stop = String(chars[at...at + 1])
    let text = try runner.generate(golden.promptText, config: .init(maxNewTokens: golden.greedyIds.count,
                                                                   stopStrings: ["never appears", stop]))
    XCTAssertEqual(runner.stats.stopReason, .stopString)
    XCTAssertEqual(text, String(full[..<full.range(of: stop)!.lowerBound]))
  }

  func testSamplingIsReproducibleWithASeed() throws {
    let runner = try makeRunner()
    let config = GenerationConfig(maxNewTokens: 12, temperature: 1.0, topK: 40, topP: 0.95, minP: 0.01,
                                  repetitionPenalty: 1.1, seed: 42)
    let a = try runner.generate("Once upon a time", config: config)
    let b = try runner.generate("Once upon a time", config: config)
    XCTAssertEqual(a, b)
    XCTAssertNotEqual(try runner.generate("Once upon a time", config: .init(maxNewTokens: 12)), a,
                      "sampling at temperature 1 gave the greedy text")
  }

  // ---- chat --------------------------------------------------------------------------------

  func testChatTwoTurnsKeepTheCache() throws {
    let runner = try makeRunner()
    runner.systemPrompt = "Be brief."
    XCTAssertEqual(runner.systemPrompt, "Be brief.")
    let config = GenerationConfig(maxNewTokens: 4)
    var streamed = ""
    let first = try runner.chat("Hi", config: config) { streamed += $0 }
    XCTAssertEqual(streamed, first)
    let afterFirst = runner.position
    XCTAssertGreaterThan(afterFirst, 0)
    let second = try runner.chat("More", config: config)
    XCTAssertGreaterThan(runner.position, afterFirst + 4, "turn 2 did not continue the cache")
    _ = second
    // reset() forgets: the same first turn again gives the same reply and position.
    runner.reset()
    XCTAssertEqual(runner.position, 0)
    XCTAssertEqual(try runner.chat("Hi", config: config), first)
    XCTAssertEqual(runner.position, afterFirst)
    // Another system prompt changes the first turn's context.
    runner.reset()
    runner.systemPrompt = nil
    XCTAssertEqual(runner.systemPrompt, "")
    _ = try runner.chat("Hi", config: config)
    XCTAssertLessThan(runner.position, afterFirst)
  }

  func testResetFromInsideTheClosure() throws {
    let runner = try makeRunner()
    var pieces = 0
    try runner.chat("Hi", config: .init(maxNewTokens: 20)) { _ in
      pieces += 1
      XCTAssertGreaterThan(runner.position, 0)  // reading the runner from the closure is fine
      if pieces == 1 { runner.reset() }
    }
    XCTAssertLessThanOrEqual(pieces, 2)
    XCTAssertEqual(runner.stats.stopReason, .cancelled)
    XCTAssertEqual(runner.position, 0)
  }

  func testGenerationFromInsideTheClosureThrows() throws {
    let runner = try makeRunner()
    var inner: Error?
    try runner.generate("Once", config: .init(maxNewTokens: 2)) { _ in
      do { try runner.generate("again") } catch { inner = error }
    }
    XCTAssertEqual((inner as? PocketError)?.status, .busy)
    XCTAssertTrue((inner as? PocketError)?.message.contains("one generation at a time") ?? false)
  }

  // ---- threads -----------------------------------------------------------------------------

  func testOneRunnerFromSeveralThreadsIsGoldenOrBusy() throws {
    // 3 threads x 4 calls: each returns the golden ids or throws .busy (never waits, never a
    // wrong result); a fourth thread reads the runner meanwhile.
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    let config = GenerationConfig(maxNewTokens: golden.greedyIds.count)
    let goldens = Counter()
    let failures = Counter()
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for _ in 0..<(thread == 3 ? 50 : 4) {
        do {
          if thread == 3 {
            if try runner.encode(golden.promptText) != golden.promptIds { failures.add() }
            if runner.position < 0 || runner.position > runner.maxSeqLen { failures.add() }
            _ = runner.stats
          } else if try runner.generateIds(golden.promptIds, config: config) == golden.greedyIds {
            goldens.add()
          } else {
            failures.add()
          }
        } catch let error as PocketError where error.status == .busy {
          continue
        } catch {
          failures.add()
        }
      }
    }
    XCTAssertEqual(failures.value, 0)
    XCTAssertGreaterThanOrEqual(goldens.value, 1)
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: config), golden.greedyIds)
  }

  func testBusyWhileAnotherThreadGenerates() throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    runner.systemPrompt = "Be brief."
    let inside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      var first = true
      _ = try? runner.generate("Once", config: .init(maxNewTokens: 3)) { _ in
        guard first else { return }
        first = false
        inside.signal()
        _ = release.wait(timeout: .now() + 30)  // hold the generation on its first piece
      }
      done.signal()
    }
    inside.wait()
    assertThrows(.busy) { try runner.generateIds(golden.promptIds) }
    assertThrows(.busy) { try runner.generate("x") }
    assertThrows(.busy) { try runner.chat("x") }
    // The rest does not wait for the generation.
    XCTAssertEqual(try runner.encode(golden.promptText), golden.promptIds)
    XCTAssertGreaterThan(runner.position, 0)
    XCTAssertNil(runner.stats.stopReason)
    runner.systemPrompt = "Be kind."  // applies when the generation has ended
    XCTAssertEqual(runner.systemPrompt, "Be kind.")
    release.signal()
    XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
    XCTAssertEqual(runner.stats.stopReason, .maxNewTokens)
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: golden.greedyIds.count)),
                   golden.greedyIds)
  }

  func testNumThreads() throws {
    let golden = try Golden.greedy()
    let runner = try makeRunner()
    runner.numThreads = 2
    XCTAssertEqual(runner.numThreads, 2)
    XCTAssertEqual(try runner.generateIds(golden.promptIds, config: .init(maxNewTokens: golden.greedyIds.count)),
                   golden.greedyIds)
    runner.numThreads = -1
    XCTAssertEqual(runner.numThreads, 0)
  }

  // ---- errors ------------------------------------------------------------------------------

  func testBadConfigValuesThrow() throws {
    let runner = try makeRunner()
    let cases: [(GenerationConfig, String)] = [
      (.init(maxNewTokens: -1), "max_new_tokens"),
      (.init(maxNewTokens: Int(Int32.max) + 1), "maxNewTokens"),
      (.init(temperature: -1), "temperature"),
      (.init(topK: -3), "top_k"),
      (.init(topK: Int.max), "topK"),
      (.init(topP: 0), "top_p"),
      (.init(topP: 1.5), "top_p"),
      (.init(minP: 2), "min_p"),
      (.init(repetitionPenalty: 0), "repetition_penalty"),
      (.init(repetitionPenalty: .infinity), "repetition_penalty"),
      (.init(temperature: .nan), "temperature"),
      (.init(stopStrings: [""]), "stop string"),
    ]
    for (config, fragment) in cases {
      var pieces = 0
      assertThrows(.invalidArgument, fragment) { try runner.generate("Hello", config: config) { _ in pieces += 1 } }
      assertThrows(.invalidArgument, fragment) { try runner.chat("Hello", config: config) }
      assertThrows(.invalidArgument, fragment) { try runner.generateIds([5, 6], config: config) }
      XCTAssertEqual(pieces, 0)
    }
    // The runner is fine afterwards.
    XCTAssertEqual(try runner.generateIds([5, 6], config: .init(maxNewTokens: 2)).count, 2)
  }

  func testBadPrompts() throws {
    let runner = try makeRunner()
    assertThrows(.outOfRange, "context overflow") {
      try runner.generateIds([Int32](repeating: 5, count: 200), config: .init(maxNewTokens: 4))
    }
    assertThrows(.outOfRange, "context overflow") {
      try runner.generate(String(repeating: "Once upon a time ", count: 100))
    }
    assertThrows(.invalidArgument, "outside the vocabulary") { try runner.generateIds([5, 100_000]) }
    assertThrows(.invalidArgument, "outside the vocabulary") { try runner.generateIds([-1]) }
    assertThrows(.invalidArgument, "no tokens") { try runner.generateIds([]) }
    assertThrows(.invalidArgument, "no tokens") { try runner.generate("") }
    assertThrows(.outOfRange, "outside the vocabulary") { try runner.decode([Int32(runner.vocabSize) + 5]) }
  }

  func testLoadErrors() throws {
    assertThrows(.notFound, "/nonexistent.pocket") {
      try TextRunner(modelPath: "/nonexistent.pocket", tokenizerPath: Golden.llmTokenizer)
    }
    assertThrows(.notFound) { try TextRunner(modelPath: Golden.llm, tokenizerPath: "/nonexistent/tokenizer.json") }
    // tiny_llm.pocket carries no tokenizer of its own.
    assertThrows(.notFound) { try TextRunner(modelPath: Golden.llm) }
    assertThrows(.notFound) { try TextRunner(modelPath: Golden.llm, tokenizerPath: nil) }
    assertThrows(.invalidArgument, "not an LLM program") {
      try TextRunner(modelPath: Golden.path("mlp.pocket"), tokenizerPath: Golden.llmTokenizer)
    }
    XCTAssertThrowsError(try TextRunner(modelPath: Golden.llm, tokenizerPath: Golden.llm)) {
      XCTAssertTrue($0 is PocketError)
    }
    let garbage = try temporaryFile(Array("not a model".utf8))
    let badTokenizer = try temporaryFile(Array("{\"model\": 12".utf8), suffix: ".json")
    defer { for p in [garbage, badTokenizer] { try? FileManager.default.removeItem(atPath: p) } }
    assertThrows(.invalidProgram) { try TextRunner(modelPath: garbage, tokenizerPath: Golden.llmTokenizer) }
    XCTAssertThrowsError(try TextRunner(modelPath: Golden.llm, tokenizerPath: badTokenizer)) {
      XCTAssertTrue($0 is PocketError)
    }
  }
}

/// A value shared between threads in a test.
final class Box<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T?
  var value: T? {
    get { lock.lock(); defer { lock.unlock() }; return stored }
    set { lock.lock(); stored = newValue; lock.unlock() }
  }
}
