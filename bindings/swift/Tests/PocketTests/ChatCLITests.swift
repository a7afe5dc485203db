// The pocket-chat demo (demo_apps/cli/swift) run as a process with scripted standard input on
// the golden tiny LLM: its replies equal TextRunner.chat's, /reset forgets, /exit quits.
import Foundation
import XCTest

@testable import Pocket

final class ChatCLITests: XCTestCase {
  /// The pocket-chat executable next to this test bundle (swift build/test builds both), or
  /// POCKET_CHAT_BIN.
  private var executable: URL {
    if let path = ProcessInfo.processInfo.environment["POCKET_CHAT_BIN"], !path.isEmpty {
      return URL(fileURLWithPath: path)
    }
#if os(macOS)
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("pocket-chat")
    }
#endif
    return Bundle.main.bundleURL.appendingPathComponent("pocket-chat")
  }

  private func run(_ arguments: [String], stdin: String) throws -> (status: Int32, stdout: String, stderr: String) {
    XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path),
                  "no \(executable.path): run swift build first")
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let (input, output, errors) = (Pipe(), Pipe(), Pipe())
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    // Read both pipes to the end before waiting, so a full pipe cannot block the child.
    let err = Box<Data>()
    let reader = Thread { err.value = errors.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while err.value == nil { Thread.sleep(forTimeInterval: 0.01) }
    return (process.terminationStatus, String(decoding: out, as: UTF8.self),
            String(decoding: err.value ?? Data(), as: UTF8.self))
  }

  func testScriptedChat() throws {
    let args = [Golden.llm, "--tokenizer", Golden.llmTokenizer, "--max-new-tokens", "6", "--system", "Be brief."]
    let result = try run(args, stdin: "Hi\n\n/reset\nHi\nMore\n/exit\nnot read\n")
    XCTAssertEqual(result.status, 0, result.stderr)
    // The same conversation through the library.
    let runner = try TextRunner(modelPath: Golden.llm, tokenizerPath: Golden.llmTokenizer)
    runner.systemPrompt = "Be brief."
    let config = GenerationConfig(maxNewTokens: 6)
    let first = try runner.chat("Hi", config: config)
    runner.reset()
    let again = try runner.chat("Hi", config: config)
    let second = try runner.chat("More", config: config)
    XCTAssertEqual(first, again)
    XCTAssertEqual(result.stdout, first + "\n" + again + "\n" + second + "\n")
    XCTAssertTrue(result.stderr.contains("(conversation reset)"), result.stderr)
  }

  func testEndOfInputQuitsAndStatsGoToStandardError() throws {
    let args = [Golden.llm, "--tokenizer", Golden.llmTokenizer, "--max-new-tokens", "3", "--stats"]
    let result = try run(args, stdin: "Hello")
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertTrue(result.stdout.hasSuffix("\n"))
    XCTAssertTrue(result.stderr.contains("generated 3 tokens"), result.stderr)
  }

  func testFailures() throws {
    let missing = try run(["/nonexistent.pocket", "--tokenizer", Golden.llmTokenizer], stdin: "Hi\n")
    XCTAssertEqual(missing.status, 1)
    XCTAssertTrue(missing.stderr.contains("NOT_FOUND"), missing.stderr)
    let notLLM = try run([Golden.path("mlp.pocket"), "--tokenizer", Golden.llmTokenizer], stdin: "")
    XCTAssertEqual(notLLM.status, 1)
    XCTAssertTrue(notLLM.stderr.contains("not an LLM program"), notLLM.stderr)
    let usage = try run(["--max-new-tokens", "many"], stdin: "")
    XCTAssertEqual(usage.status, 2)
    XCTAssertTrue(usage.stderr.contains("usage: pocket-chat"), usage.stderr)
    let badConfig = try run([Golden.llm, "--tokenizer", Golden.llmTokenizer, "--temperature", "-1"], stdin: "Hi\n")
    XCTAssertEqual(badConfig.status, 1)
    XCTAssertTrue(badConfig.stderr.contains("temperature"), badConfig.stderr)
    // A conversation longer than the context: the turn fails with a hint, the chat goes on.
    let long = String(repeating: "Once upon a time ", count: 60)
    let full = try run([Golden.llm, "--tokenizer", Golden.llmTokenizer, "--max-new-tokens", "2"],
                       stdin: "\(long)\n/reset\nHi\n")
    XCTAssertEqual(full.status, 0, full.stderr)
    XCTAssertTrue(full.stderr.contains("/reset starts a new one"), full.stderr)
  }
}
