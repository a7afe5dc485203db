// A model the user picked (the file importer, a download) is copied once into app storage,
// where it can be mapped, with progress.
import Foundation

public enum ModelFiles {
  /// Copies `source` to `destination` through a ".part" file renamed at the end, so an
  /// interrupted copy never looks finished; skips the copy when `destination` already has the
  /// source's size. `progress` gets fractions in 0...1 (at most about 200 calls).
  @discardableResult
  public static func copyOnce(from source: URL, to destination: URL,
                              progress: (Double) -> Void = { _ in }) throws -> URL {
    let fm = FileManager.default
    let size = (try fm.attributesOfItem(atPath: source.path)[.size] as? NSNumber)?.int64Value ?? -1
    if size > 0, let existing = try? fm.attributesOfItem(atPath: destination.path)[.size] as? NSNumber,
       existing.int64Value == size {
      progress(1)
      return destination
    }
    try fm.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
    let part = destination.appendingPathExtension("part")
    defer { try? fm.removeItem(at: part) }
    guard fm.createFile(atPath: part.path, contents: nil) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: part.path])
    }
    let input = try FileHandle(forReadingFrom: source)
    defer { try? input.close() }
    let output = try FileHandle(forWritingTo: part)
    var done: Int64 = 0
    var reported = -1
    while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
      try output.write(contentsOf: chunk)
      done += Int64(chunk.count)
      let step = size > 0 ? Int(done * 200 / size) : -1
      if step > reported {
        reported = step
        progress(min(1, Double(done) / Double(size)))
      }
    }
    try output.close()
    if fm.fileExists(atPath: destination.path) { try fm.removeItem(at: destination) }
    try fm.moveItem(at: part, to: destination)
    progress(1)
    return destination
  }
}
