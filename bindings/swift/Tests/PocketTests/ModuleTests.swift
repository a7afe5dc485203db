// Module on the golden programs: forward outputs equal eager PyTorch's (.forward.io), program
// introspection, and every error path (missing/corrupt file, wrong dtype/shape/count).
import Foundation
import XCTest

@testable import Pocket

final class ModuleTests: XCTestCase {
  // ---- golden outputs ----------------------------------------------------------------------

  func testMLPForwardMatchesPyTorch() throws { try checkGolden("mlp") }
  func testCNNForwardMatchesPyTorch() throws { try checkGolden("cnn") }
  func testEncoderForwardMatchesPyTorch() throws { try checkGolden("encoder") }

  func testGoldenOutputsWithReadLoadingAndFromMemory() throws {
    try checkGolden("mlp", module: try Module(path: Golden.path("mlp.pocket"), mmap: false))
    try checkGolden("cnn", module: try Module(bytes: try Golden.bytes("cnn.pocket")))
  }

  private func checkGolden(_ name: String, module given: Module? = nil) throws {
    let module = try given ?? Module(path: Golden.path("\(name).pocket"))
    let (inputs, expected) = try Golden.io(name)
    let outputs = try module.forward(inputs)
    XCTAssertEqual(outputs.count, expected.count, name)
    for (got, want) in zip(outputs, expected) {
      let got = try got.anyTensor()
      XCTAssertEqual(got.dtype, want.dtype, name)
      XCTAssertEqual(got.shape, want.shape, name)
      if want.dtype == .float32 {
        let (g, w) = (try got.scalars(as: Float.self), try want.scalars(as: Float.self))
        let bad = zip(g, w).enumerated().first { abs($0.element.0 - $0.element.1) > 1e-4 + 1e-4 * abs($0.element.1) }
        XCTAssertNil(bad, "\(name): output differs from PyTorch at \(String(describing: bad))")
      } else {
        XCTAssertEqual(got.bytes, want.bytes, name)
      }
    }
  }

  func testTypedTensorInOut() throws {
    // The README's shape of use: a typed tensor in, a typed tensor out.
    let module = try Module(path: Golden.path("mlp.pocket"))
    let (inputs, expected) = try Golden.io("mlp")
    let input: Tensor<Float> = try inputs[0].tensor()
    let output: Tensor<Float> = try module.forward(input)[0].tensor()
    XCTAssertEqual(output.shape, expected[0].shape)
    let want = try expected[0].scalars(as: Float.self)
    for (a, b) in zip(output.scalars, want) { XCTAssertEqual(a, b, accuracy: 1e-4 + 1e-4 * abs(b)) }
    // execute(method:) is the same call by name.
    XCTAssertEqual(try module.execute(method: "forward", input), try module.forward([input]))
  }

  func testDynamicBatch() throws {
    let module = try Module(path: Golden.path("mlp.pocket"))
    let (inputs, expected) = try Golden.io("mlp")
    let x = try inputs[0].scalars(as: Float.self)  // (3, 16)
    let want = try expected[0].scalars(as: Float.self)  // (3, 8)
    // One row at a time gives the same rows as the batch of three.
    for row in 0..<3 {
      let one = try Tensor<Float>(shape: [1, 16], scalars: Array(x[row * 16..<(row + 1) * 16]))
      let y: Tensor<Float> = try module.forward(one)[0].tensor()
      for (a, b) in zip(y.scalars, want[row * 8..<(row + 1) * 8]) { XCTAssertEqual(a, b, accuracy: 1e-4 + 1e-4 * abs(b)) }
    }
    let sixteen = try Tensor<Float>(shape: [16, 16], repeating: 0.5)
    XCTAssertEqual(try module.forward(sixteen)[0].anyTensor().shape, [16, 8])
    assertThrows(.invalidArgument, "dim 0 must be between 1 and 16") {
      try module.forward(try Tensor<Float>(shape: [17, 16], repeating: 0))
    }
  }

  // ---- introspection -----------------------------------------------------------------------

  func testMethodsAndTensorInfo() throws {
    let module = try Module(path: Golden.path("mlp.pocket"))
    XCTAssertEqual(module.methodNames, ["forward"])
    let inputs = try module.inputs()
    XCTAssertEqual(inputs, [TensorInfo(dtype: .float32, minShape: [1, 16], maxShape: [16, 16])])
    XCTAssertTrue(inputs[0].isDynamic)
    XCTAssertEqual(inputs[0].description, "float32[1..16, 16]")
    let outputs = try module.outputs(method: "forward")
    XCTAssertEqual(outputs.count, 1)
    XCTAssertEqual(outputs[0].dtype, .float32)
    XCTAssertEqual(outputs[0].maxShape.last, 8)
    let encoder = try Module(path: Golden.path("encoder.pocket"))
    XCTAssertEqual(try encoder.inputs()[0].dtype, .int64)
    XCTAssertFalse(try encoder.inputs()[0].isDynamic)
  }

  func testLLMMetadataAndMethods() throws {
    let module = try Module(path: Golden.llm)
    XCTAssertTrue(Set(module.methodNames).isSuperset(of: ["prefill", "decode"]), "\(module.methodNames)")
    XCTAssertEqual(module.metadata["max_seq_len"], "128")
    XCTAssertNotNil(module.metadata["vocab_size"])
    XCTAssertTrue(try Module(path: Golden.path("mlp.pocket")).metadata["max_seq_len"] == nil)
  }

  func testScalarValueIsPassedAsOneElementInput() throws {
    // decode(tokens int64 (1, 1), position int64 (1,)): .int(0) stands for the position tensor.
    let module = try Module(path: Golden.llm)
    let token = try Tensor<Int64>(shape: [1, 1], scalars: [17])
    let position = try Tensor<Int64>(shape: [1], scalars: [0])
    let explicit = try module.execute(method: "decode", token, position)
    let scalar = try module.execute(method: "decode", [Value.tensor(AnyTensor(token)), .int(0)])
    XCTAssertEqual(scalar, explicit)
    let vocab = Int(module.metadata["vocab_size"] ?? "") ?? -1
    XCTAssertEqual(try explicit[0].anyTensor().count, vocab)
    // The token is a one-element input too.
    XCTAssertEqual(try module.execute(method: "decode", [Value.int(17), .int(0)]), explicit)
    assertThrows(.invalidArgument, "int64; 0.5 does not fit it") {
      try module.execute(method: "decode", [Value.int(17), .double(0.5)])
    }
  }

  func testNumThreadsDoesNotChangeResults() throws {
    let module = try Module(path: Golden.path("cnn.pocket"))
    let (inputs, _) = try Golden.io("cnn")
    module.numThreads = 1
    XCTAssertEqual(module.numThreads, 1)
    let one = try module.forward(inputs)
    module.numThreads = 2
    let two = try module.forward(inputs)
    XCTAssertEqual(try one[0].scalars(as: Float.self).count, try two[0].scalars(as: Float.self).count)
    for (a, b) in zip(try one[0].scalars(as: Float.self), try two[0].scalars(as: Float.self)) {
      XCTAssertEqual(a, b, accuracy: 1e-5 + 1e-5 * abs(b))
    }
    module.numThreads = -5  // no trap: the default
    XCTAssertEqual(module.numThreads, 0)
    XCTAssertNoThrow(try module.forward(inputs))
  }

  func testModuleIsUsableFromSeveralThreads() throws {
    // 4 threads x 25 calls on one module: every result equals the single-threaded one, bit for
    // bit (calls are serialized; they share the planned memory).
    let module = try Module(path: Golden.path("mlp.pocket"))
    let (inputs, expected) = try Golden.io("mlp")
    let want = try module.forward(inputs)[0].scalars(as: Float.self)
    XCTAssertFalse(zip(want, try expected[0].scalars(as: Float.self))
      .contains(where: { abs($0 - $1) > 1e-4 + 1e-4 * abs($1) }))
    let failures = Counter()
    DispatchQueue.concurrentPerform(iterations: 4) { _ in
      for _ in 0..<25 {
        do {
          if try module.forward(inputs)[0].scalars(as: Float.self) != want { failures.add() }
        } catch {
          failures.add()
        }
      }
    }
    XCTAssertEqual(failures.value, 0)
  }

  // ---- errors ------------------------------------------------------------------------------

  func testMissingFile() {
    assertThrows(.notFound, "/nonexistent/model.pocket") { try Module(path: "/nonexistent/model.pocket") }
    assertThrows(.notFound) { try Module(path: "/nonexistent/model.pocket", mmap: false) }
  }

  func testCorruptFiles() throws {
    let good = try Golden.bytes("mlp.pocket")
    let garbage = try temporaryFile(Array("this is not a pocket program, just text".utf8))
    let truncated = try temporaryFile(Array(good.prefix(good.count / 2)))
    var flipped = good
    for i in stride(from: 16, to: min(flipped.count, 400), by: 7) { flipped[i] ^= 0xA5 }
    let damaged = try temporaryFile(flipped)
    let empty = try temporaryFile([])
    defer { for p in [garbage, truncated, damaged, empty] { try? FileManager.default.removeItem(atPath: p) } }
    assertThrows(.invalidProgram) { try Module(path: garbage) }
    assertThrows(.invalidProgram) { try Module(path: truncated) }
    assertThrows(.invalidProgram) { try Module(path: empty) }
    assertThrows(.invalidProgram) { try Module(bytes: Array(good.prefix(100))) }
    assertThrows(.invalidProgram) { try Module(bytes: []) }
    // Damage deep inside may be caught at load or when the method loads; it must throw, not crash.
    do {
      let m = try Module(path: damaged)
      _ = try m.forward(try Golden.io("mlp").inputs)
      XCTFail("a damaged program loaded and ran")
    } catch let e as PocketError {
      XCTAssertTrue([.invalidProgram, .unsupported, .notFound, .invalidArgument].contains(e.status), "\(e)")
    }
  }

  func testWrongInputs() throws {
    let module = try Module(path: Golden.path("mlp.pocket"))
    let x = try Tensor<Float>(shape: [2, 16], repeating: 1)
    assertThrows(.invalidArgument, "expected dtype float32, got int64") {
      try module.forward(try Tensor<Int64>(shape: [2, 16], repeating: 1))
    }
    assertThrows(.invalidArgument, "dim 1 must be 16") { try module.forward(try Tensor<Float>(shape: [2, 15], repeating: 1)) }
    assertThrows(.invalidArgument, "expected 2 dims") { try module.forward(try Tensor<Float>(shape: [32], repeating: 1)) }
    assertThrows(.invalidArgument, "takes 1 inputs, got 2") { try module.forward(x, x) }
    assertThrows(.invalidArgument, "takes 1 inputs, got 0") { try module.forward([]) }
    assertThrows(.notFound, "nope") { try module.execute(method: "nope", x) }
    assertThrows(.notFound) { try module.inputs(method: "nope") }
    assertThrows(.invalidArgument, "at most 8") {
      try module.forward(try Tensor<Float>(shape: [1, 1, 1, 1, 1, 1, 1, 1, 1], scalars: [1]))
    }
    assertThrows(.invalidArgument, "fits only a one-element input") { try module.forward(Value.double(1)) }
    assertThrows(.invalidArgument, "input 1 is extra") { try module.forward(x, Value.int(1)) }
    // The module still works after every failure.
    XCTAssertEqual(try module.forward(x)[0].anyTensor().shape, [2, 8])
  }
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var n = 0
  func add() { lock.lock(); n += 1; lock.unlock() }
  var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
