// The repo's golden programs (tests/golden, or POCKET_GOLDEN_DIR): .pocket files, their
// .forward.io inputs and eager PyTorch outputs, and the tiny LLM's greedy ids.
import Foundation
import XCTest

@testable import Pocket

enum Golden {
  static let dir: String = {
    if let d = ProcessInfo.processInfo.environment["POCKET_GOLDEN_DIR"], !d.isEmpty { return d }
    // Tests/PocketTests/Golden.swift -> the repo root is four folders up.
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<5 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("tests/golden").path
  }()

  static func path(_ name: String) -> String { dir + "/" + name }

  static var llm: String { path("tiny_llm.pocket") }
  static var llmTokenizer: String { path("tiny_llm.tokenizer.json") }

  static func bytes(_ name: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path(name)) else {
      throw PocketError(.notFound, "no golden file \(path(name)): run tests/golden/make_golden.py")
    }
    return [UInt8](data)
  }

  /// Reads <name>.forward.io: u32 magic "PKIO", u32 n_inputs, u32 n_outputs, then per tensor
  /// u32 dtype, u32 ndim, i64 dims[ndim], raw data (little-endian).
  static func io(_ name: String) throws -> (inputs: [AnyTensor], outputs: [AnyTensor]) {
    let b = try bytes("\(name).forward.io")
    var at = 0
    func u32() throws -> Int {
      guard at + 4 <= b.count else { throw PocketError(.invalidArgument, "\(name).forward.io is truncated") }
      defer { at += 4 }
      return Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24
    }
    func i64() throws -> Int { try u32() | (try u32() << 32) }
    guard b.starts(with: Array("PKIO".utf8)) else { throw PocketError(.invalidArgument, "\(name): bad magic") }
    at = 4
    let nIn = try u32()
    let nOut = try u32()
    var tensors: [AnyTensor] = []
    for _ in 0..<(nIn + nOut) {
      guard let dtype = DType(rawValue: try u32()) else { throw PocketError(.invalidArgument, "bad dtype") }
      let ndim = try u32()
      let shape = try (0..<ndim).map { _ in try i64() }
      let n = shape.reduce(1, *) * dtype.size
      guard at + n <= b.count else { throw PocketError(.invalidArgument, "\(name).forward.io is truncated") }
      tensors.append(try AnyTensor(dtype: dtype, shape: shape, bytes: Array(b[at..<at + n])))
      at += n
    }
    return (Array(tensors[..<nIn]), Array(tensors[nIn...]))
  }

  /// tiny_llm.greedy.txt: "prompt_ids ...", "greedy_ids ...", "prompt_text <text>".
  static func greedy() throws -> (promptIds: [Int32], greedyIds: [Int32], promptText: String) {
    let text = String(decoding: try bytes("tiny_llm.greedy.txt"), as: UTF8.self)
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") {
      guard let space = line.firstIndex(of: " ") else { continue }
      fields[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    func ids(_ key: String) -> [Int32] { (fields[key] ?? "").split(separator: " ").compactMap { Int32($0) } }
    return (ids("prompt_ids"), ids("greedy_ids"), fields["prompt_text"] ?? "")
  }
}

/// Asserts that `body` throws a PocketError with `status` whose message contains `fragment`.
func assertThrows<T>(_ status: PocketError.Status, _ fragment: String = "", file: StaticString = #filePath,
                     line: UInt = #line, _ body: () throws -> T) {
  do {
    _ = try body()
    XCTFail("expected \(status) error, nothing was thrown", file: file, line: line)
  } catch let error as PocketError {
    XCTAssertEqual(error.status, status, "\(error)", file: file, line: line)
    XCTAssertEqual(error.code, status.rawValue, file: file, line: line)
    if !fragment.isEmpty {
      XCTAssertTrue(error.message.contains(fragment), "'\(error.message)' lacks '\(fragment)'", file: file, line: line)
    }
  } catch {
    XCTFail("expected PocketError, got \(error)", file: file, line: line)
  }
}

/// A temporary file holding `bytes`; removed by the caller.
func temporaryFile(_ bytes: [UInt8], suffix: String = ".pocket") throws -> String {
  let path = NSTemporaryDirectory() + "pocket-swift-\(UUID().uuidString)\(suffix)"
  guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
    throw PocketError(.io, "cannot write \(path)")
  }
  return path
}
