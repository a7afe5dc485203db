// Module(fileDescriptor:offset:length:) and TextRunner(fileDescriptor:...): golden programs
// stored (not deflated) inside a zip, as resources inside an app archive, run like the files
// themselves; a wrong offset or length throws a PocketError naming it.
import Foundation
import XCTest

@testable import Pocket

final class LoadFdTests: XCTestCase {
  /// A zip of a 5000-byte text entry and `program` stored at an offset that is `skew` more than
  /// a multiple of 64 (padded through the local header's extra field, as zipalign does).
  /// Returns the file and where the program's bytes start.
  private func storedZip(_ program: [UInt8], skew: Int) throws -> (path: String, offset: UInt64) {
    var zip: [UInt8] = []
    var directory: [UInt8] = []
    func le(_ v: Int, _ bytes: Int, _ out: inout [UInt8]) { for i in 0..<bytes { out.append(UInt8((v >> (8 * i)) & 0xFF)) } }
    func crc32(_ data: [UInt8]) -> Int {
      var c: UInt32 = 0xFFFF_FFFF
      for b in data {
        c ^= UInt32(b)
        for _ in 0..<8 { c = (c >> 1) ^ (0xEDB8_8320 & (0 &- (c & 1))) }
      }
      return Int(~c)
    }
    func entry(_ name: String, _ data: [UInt8], align: Int) -> Int {
      let header = zip.count
      let bare = header + 30 + name.utf8.count + 4
      let pad = ((skew - bare) % align + align) % align
      let fields = { (out: inout [UInt8]) in
        le(0, 2, &out); le(0, 2, &out); le(0, 2, &out); le(0x21, 2, &out)  // flags, stored, time, date
        le(crc32(data), 4, &out); le(data.count, 4, &out); le(data.count, 4, &out)
      }
      le(0x0403_4b50, 4, &zip); le(20, 2, &zip); fields(&zip)
      le(name.utf8.count, 2, &zip); le(4 + pad, 2, &zip); zip += Array(name.utf8)
      le(0xD935, 2, &zip); le(pad, 2, &zip); zip += [UInt8](repeating: 0, count: pad)
      let offset = zip.count
      zip += data
      le(0x0201_4b50, 4, &directory); le(20, 2, &directory); le(20, 2, &directory); fields(&directory)
      le(name.utf8.count, 2, &directory); le(0, 2, &directory); le(0, 2, &directory); le(0, 2, &directory)
      le(0, 2, &directory); le(0, 4, &directory); le(header, 4, &directory); directory += Array(name.utf8)
      return offset
    }
    _ = entry("readme.txt", [UInt8](repeating: UInt8(ascii: "x"), count: 5000), align: 1)
    let offset = entry("assets/model.pocket", program, align: 64)
    let start = zip.count
    zip += directory
    le(0x0605_4b50, 4, &zip); le(0, 4, &zip); le(2, 2, &zip); le(2, 2, &zip)
    le(directory.count, 4, &zip); le(start, 4, &zip); le(0, 2, &zip)
    let path = NSTemporaryDirectory() + "/pocket-loadfd-\(UUID().uuidString).zip"
    XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(zip)))
    addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return (path, UInt64(offset))
  }

  private func withOpen<T>(_ path: String, _ body: (Int32) throws -> T) throws -> T {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw PocketError(.io, "cannot open \(path)") }
    defer { close(fd) }
    return try body(fd)
  }

  func testProgramInAZipRunsLikeTheFile() throws {
    let program = try Golden.bytes("mlp.pocket")
    let (inputs, _) = try Golden.io("mlp")
    let want = try Module(path: Golden.path("mlp.pocket")).forward(inputs)
    for skew in [0, 4] {
      let (zipPath, offset) = try storedZip(program, skew: skew)
      let module = try withOpen(zipPath) { try Module(fileDescriptor: $0, offset: offset, length: UInt64(program.count)) }
      XCTAssertEqual(module.isMapped, skew == 0, "mapped in place only at a 16-aligned offset")
      let got = try module.forward(inputs)
      XCTAssertEqual(got.count, want.count)
      for (g, w) in zip(got, want) { XCTAssertEqual(try g.anyTensor().bytes, try w.anyTensor().bytes, "skew \(skew)") }
      let read = try withOpen(zipPath) { try Module(fileDescriptor: $0, offset: offset, length: UInt64(program.count), mmap: false) }
      XCTAssertFalse(read.isMapped)
      XCTAssertEqual(try read.forward(inputs)[0].anyTensor().bytes, try want[0].anyTensor().bytes)
    }
  }

  func testWrongOffsetOrLengthIsAClearError() throws {
    let program = try Golden.bytes("mlp.pocket")
    let (zip, offset) = try storedZip(program, skew: 0)
    let size = UInt64(program.count)
    let fileSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: zip)[.size] as? NSNumber).uint64Value
    try withOpen(zip) { fd in
      let cases: [(UInt64, UInt64, PocketError.Status, String)] = [
        (offset - 16, size, .invalidProgram, "wrong magic"),
        (offset + 4, size, .invalidProgram, "offset \(offset + 4)"),
        (offset, size - 100, .invalidProgram, "length \(size - 100)"),
        (offset, fileSize, .outOfRange, "beyond the end of the file"),
        (fileSize + 64, 64, .outOfRange, "beyond the end of the file"),
      ]
      for (off, length, status, needle) in cases {
        XCTAssertThrowsError(try Module(fileDescriptor: fd, offset: off, length: length)) { error in
          let e = error as? PocketError
          XCTAssertEqual(e?.status, status, "\(error)")
          XCTAssertTrue(e?.message.contains(needle) ?? false, "'\(error)' does not mention '\(needle)'")
        }
      }
      XCTAssertThrowsError(try TextRunner(fileDescriptor: fd, offset: offset + 4, length: size,
                                          tokenizerPath: Golden.llmTokenizer)) { error in
        XCTAssertEqual((error as? PocketError)?.status, .invalidProgram, "\(error)")
      }
    }
    XCTAssertThrowsError(try Module(fileDescriptor: 987_654, offset: 0, length: 64)) { error in
      XCTAssertEqual((error as? PocketError)?.status, .invalidArgument, "\(error)")
      XCTAssertTrue((error as? PocketError)?.message.contains("not an open file descriptor") ?? false, "\(error)")
    }
  }

  func testTextRunnerFromAZipGeneratesLikeTheFile() throws {
    let program = try Golden.bytes("tiny_llm.pocket")
    let (zip, offset) = try storedZip(program, skew: 0)
    let fromZip = try withOpen(zip) {
      try TextRunner(fileDescriptor: $0, offset: offset, length: UInt64(program.count), tokenizerPath: Golden.llmTokenizer)
    }
    let fromFile = try TextRunner(modelPath: Golden.llm, tokenizerPath: Golden.llmTokenizer)
    let config = GenerationConfig(maxNewTokens: 16)
    let prompt: [Int32] = [1, 17, 42, 7, 99, 3]
    XCTAssertEqual(try fromZip.generateIds(prompt, config: config), try fromFile.generateIds(prompt, config: config))
    XCTAssertEqual(try fromZip.generate("Hello", config: config), try fromFile.generate("Hello", config: config))
  }
}
