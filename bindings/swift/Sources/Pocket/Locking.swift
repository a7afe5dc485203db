import Foundation

extension NSLocking {
  /// Runs `body` holding the lock. (Foundation's own withLock needs iOS 17 / macOS 14.)
  @inline(__always)
  func locked<R>(_ body: () throws -> R) rethrows -> R {
    lock()
    defer { unlock() }
    return try body()
  }
}
