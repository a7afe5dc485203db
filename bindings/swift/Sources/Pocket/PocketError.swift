// Errors: every failure of the C API (and every misuse the Swift layer catches first, such as a
// shape that does not match the scalars, or reading a float32 tensor as Int64) is thrown as a
// PocketError. Nothing in this module traps on bad input.
import CPocket
import Foundation

/// A failure reported by the Pocket runtime, or a misuse caught by the Swift API.
///
/// `code` is the C API's `pk_status` number (stable across releases); `status` is the same as
/// an enum; `message` names what failed (file, method, input, expected vs actual).
///
///     do {
///       _ = try Module(path: "missing.pocket")
///     } catch let error as PocketError where error.status == .notFound {
///       print(error.message)
///     }
public struct PocketError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The `pk_status` codes of pocket.h.
  public enum Status: Int, Sendable, CaseIterable {
    case ok = 0
    /// Wrong shape, dtype, count, name or value.
    case invalidArgument = 1
    /// A malformed or inconsistent .pocket file.
    case invalidProgram = 2
    /// Well-formed, but not supported here (format version, op).
    case unsupported = 3
    /// No such file, method, input, metadata key or embedded tokenizer.
    case notFound = 4
    case outOfMemory = 5
    /// Reading a file failed.
    case io = 6
    /// An index, shape or length outside its bounds (e.g. a prompt longer than the context).
    case outOfRange = 7
    case `internal` = 8
    /// Stopped by the caller, or a generation superseded by a later one on the same runner.
    case cancelled = 9
    /// The object is in use by another call (an LLM runner runs one call at a time).
    case busy = 10
  }

  /// The `pk_status` raw value.
  public let code: Int
  /// What went wrong, naming the file, method, input or value.
  public let message: String

  /// `code` as a `Status`; codes this version does not know read as `.internal`.
  public var status: Status { Status(rawValue: code) ?? .internal }

  public init(code: Int, message: String) {
    self.code = code
    self.message = message
  }

  public init(_ status: Status, _ message: String) {
    self.init(code: status.rawValue, message: message)
  }

  /// "INVALID_ARGUMENT: method 'forward' input 0: expected dtype float32, got int64".
  public var description: String {
    let name = String(cString: pk_status_string(pk_status(rawValue: UInt32(truncatingIfNeeded: code))))
    return message.isEmpty ? name : "\(name): \(message)"
  }

  public var errorDescription: String? { description }
}

/// Throws the calling thread's last C API error when `status` is not OK. Call it right after
/// the C call, on the same thread (pk_last_error() is thread-local) and under the handle's lock.
@inline(__always)
func check(_ status: pk_status) throws {
  if status != PK_STATUS_OK {
    throw PocketError(code: Int(status.rawValue), message: String(cString: pk_last_error()))
  }
}

/// Converts a Swift Int to the Int32 the C API takes, or throws naming `what`.
func int32(_ value: Int, _ what: String) throws -> Int32 {
  guard let v = Int32(exactly: value) else {
    throw PocketError(.invalidArgument, "\(what) must fit in 32 bits, got \(value)")
  }
  return v
}
