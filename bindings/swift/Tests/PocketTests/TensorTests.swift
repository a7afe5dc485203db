// Tensor, AnyTensor, Value and DType without a program: construction checks, type erasure
// round trips for every element type, and misuse that must throw (never trap).
import XCTest

@testable import Pocket

final class TensorTests: XCTestCase {
  func testShapeAndScalarsMustAgree() throws {
    let t = try Tensor<Float>(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
    XCTAssertEqual(t.shape, [2, 3])
    XCTAssertEqual(t.rank, 2)
    XCTAssertEqual(t.count, 6)
    XCTAssertEqual(t.dtype, .float32)
    assertThrows(.invalidArgument, "holds 6 elements, 5 scalars given") {
      try Tensor<Float>(shape: [2, 3], scalars: [1, 2, 3, 4, 5])
    }
    assertThrows(.invalidArgument, "negative size at dim 1") { try Tensor<Int32>(shape: [2, -3], scalars: []) }
    assertThrows(.invalidArgument, "too large") { try Tensor<UInt8>(shape: [Int.max, 2], repeating: 0) }
    XCTAssertEqual(try Tensor<Int64>(shape: [], scalars: [7]).count, 1)
    XCTAssertEqual(try Tensor<Int8>(shape: [0, 4], scalars: []).count, 0)
    XCTAssertEqual(try Tensor<Int16>(shape: [2, 2], repeating: 3).scalars, [3, 3, 3, 3])
    XCTAssertEqual(Tensor<UInt8>([1, 2, 3]).shape, [3])
  }

  func testReshape() throws {
    let t = try Tensor<Int32>(shape: [2, 3], scalars: [0, 1, 2, 3, 4, 5])
    XCTAssertEqual(try t.reshaped(to: [3, 2]).shape, [3, 2])
    XCTAssertEqual(try t.reshaped(to: [6]).scalars, t.scalars)
    assertThrows(.invalidArgument) { try t.reshaped(to: [4, 2]) }
  }

  func testRoundTripThroughAnyTensorForEveryElementType() throws {
    try roundTrip([1.5, -2.25, 3e-8] as [Float])
    try roundTrip([1.5, -2.25, 1e300] as [Double])
    try roundTrip([-128, 0, 127] as [Int8])
    try roundTrip([0, 128, 255] as [UInt8])
    try roundTrip([-32768, 7, 32767] as [Int16])
    try roundTrip([Int32.min, 0, Int32.max])
    try roundTrip([Int64.min, 0, Int64.max])
#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    try roundTrip([0.5, -1, 65504] as [Float16])
#endif
  }

  private func roundTrip<T: TensorElement & Equatable>(_ scalars: [T]) throws {
    let t = try Tensor<T>(shape: [1, scalars.count], scalars: scalars)
    let any = AnyTensor(t)
    XCTAssertEqual(any.dtype, T.dtype)
    XCTAssertEqual(any.shape, [1, scalars.count])
    XCTAssertEqual(any.bytes.count, scalars.count * T.dtype.size)
    XCTAssertEqual(try any.tensor(as: T.self), t)
    // Through raw bytes, as outputs arrive from the runtime.
    let fromBytes = try AnyTensor(dtype: T.dtype, shape: t.shape, bytes: any.bytes)
    XCTAssertEqual(try fromBytes.tensor(), t)
    XCTAssertEqual(fromBytes, any)
    let value = t.pocketValue
    XCTAssertEqual(try value.tensor(as: T.self), t)
  }

  func testWrongElementTypeAccessThrows() throws {
    let value = Value.tensor(AnyTensor(try Tensor<Float>(shape: [2], scalars: [1, 2])))
    assertThrows(.invalidArgument, "holds float32 elements; it cannot be read as Int64") {
      try value.tensor(as: Int64.self)
    }
    assertThrows(.invalidArgument, "cannot be read as Int32") { () -> Tensor<Int32> in try value.tensor() }
    assertThrows(.invalidArgument) { try value.anyTensor().scalars(as: UInt8.self) }
    assertThrows(.invalidArgument, "not a tensor") { try Value.int(3).tensor(as: Float.self) }
    assertThrows(.invalidArgument, "not a tensor") { try Value.bool(true).anyTensor() }
    // bfloat16 and bool tensors are held as bytes; no Swift element type reads them.
    let bf16 = try AnyTensor(dtype: .bfloat16, shape: [2], bytes: [0, 0x3f, 0, 0x40])
    assertThrows(.invalidArgument, "bfloat16") { try bf16.tensor(as: Int16.self) }
    XCTAssertEqual(bf16.bytes, [0, 0x3f, 0, 0x40])
  }

  func testBytesMustFitTheShape() {
    assertThrows(.invalidArgument, "has 12 bytes, 8 given") {
      try AnyTensor(dtype: .float32, shape: [3], bytes: [UInt8](repeating: 0, count: 8))
    }
    assertThrows(.invalidArgument, "negative") { try AnyTensor(dtype: .int8, shape: [-1], bytes: []) }
  }

  func testElementTypeWithTheWrongLayoutThrows() {
    assertThrows(.invalidArgument, "4-byte elements, but its dtype int64 has 8") {
      try Tensor<Misdeclared>(shape: [1], scalars: [Misdeclared(value: 1)])
    }
  }

  func testDTypesMatchTheCAPI() {
    let expected: [DType: (String, Int)] = [
      .float32: ("float32", 4), .float16: ("float16", 2), .bfloat16: ("bfloat16", 2), .float64: ("float64", 8),
      .int8: ("int8", 1), .uint8: ("uint8", 1), .int16: ("int16", 2), .int32: ("int32", 4), .int64: ("int64", 8),
      .bool: ("bool", 1),
    ]
    for dtype in DType.allCases {
      XCTAssertEqual(dtype.name, expected[dtype]?.0)
      XCTAssertEqual(dtype.size, expected[dtype]?.1)
    }
    XCTAssertEqual(Float.dtype, .float32)
    XCTAssertEqual(Int64.dtype, .int64)
  }

  func testErrorDescription() {
    let e = PocketError(.notFound, "no file 'x.pocket'")
    XCTAssertEqual(e.code, 4)
    XCTAssertEqual(e.description, "NOT_FOUND: no file 'x.pocket'")
    XCTAssertEqual(PocketError(code: 42, message: "?").status, .internal)
    XCTAssertEqual(PocketError.Status.allCases.count, 11)
    XCTAssertEqual(PocketError(.busy, "runner in use").description, "BUSY: runner in use")
  }

  func testScalarValuesBecomeOneElementBytes() throws {
    XCTAssertEqual(try oneElement(.int(258), as: .int16, what: "x"), [2, 1])
    XCTAssertEqual(try oneElement(.int(1), as: .float32, what: "x"), Array(withUnsafeBytes(of: Float(1)) { $0 }))
    XCTAssertEqual(try oneElement(.double(1.0), as: .bfloat16, what: "x"), [0x80, 0x3f])
    XCTAssertEqual(try oneElement(.bool(true), as: .bool, what: "x"), [1])
    XCTAssertEqual(try oneElement(.double(3), as: .int64, what: "x"), [3, 0, 0, 0, 0, 0, 0, 0])
    assertThrows(.invalidArgument, "uint8; 300 does not fit it") { try oneElement(.int(300), as: .uint8, what: "x") }
    assertThrows(.invalidArgument) { try oneElement(.double(0.5), as: .int32, what: "x") }
  }
}

/// Claims int64 but is 4 bytes: Tensor must refuse it instead of reading past its memory.
private struct Misdeclared: TensorElement {
  var value: Int32
  static var dtype: DType { .int64 }
}
