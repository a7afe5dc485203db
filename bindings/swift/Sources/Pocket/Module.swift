// Module: a loaded .pocket program (pk_module). Inputs are lent to the runtime without a copy
// for the duration of one call; outputs are copied out into Swift arrays.
import CPocket
import Foundation

/// Dtype and shape bounds of one input or output of a method. A static dimension has
/// `minShape[d] == maxShape[d]`; a dynamic one accepts any size in between.
public struct TensorInfo: Sendable, Equatable, CustomStringConvertible {
  public let dtype: DType
  public let minShape: [Int]
  public let maxShape: [Int]

  public var rank: Int { maxShape.count }
  public var isDynamic: Bool { minShape != maxShape }

  public var description: String {
    let dims = zip(minShape, maxShape).map { $0 == $1 ? "\($0)" : "\($0)..\($1)" }
    return "\(dtype)[\(dims.joined(separator: ", "))]"
  }
}

/// A model loaded from a .pocket file.
///
///     let module = try Module(path: modelPath)
///     let input = try Tensor<Float>(shape: [1, 3, 224, 224], scalars: pixels)
///     let output: Tensor<Float> = try module.forward(input)[0].tensor()
///
/// A Module may be shared between threads: calls into it are serialized. Errors are thrown as
/// `PocketError` (a missing file is `.notFound`, a malformed one `.invalidProgram`, a wrong
/// input `.invalidArgument` naming the input, expected and actual).
public final class Module: @unchecked Sendable {
  private let handle: OpaquePointer
  private let lock = NSLock()
  private var threads = 0

  /// Names of the methods in the program ("forward", or "prefill"/"decode" for an LLM).
  public let methodNames: [String]
  /// The program's string metadata (for LLMs: max_seq_len, vocab_size, bos/eos ids, ...).
  public let metadata: [String: String]

  /// Loads and verifies the program at `path`. With `mmap` (the default) the file is mapped
  /// and its constants used in place; otherwise it is read into memory.
  public convenience init(path: String, mmap: Bool = true) throws {
    var h: OpaquePointer?
    try path.withCString { try check(pk_module_load_file($0, mmap ? PK_LOAD_MMAP : PK_LOAD_READ, &h)) }
    try self.init(handle: h)
  }

  /// Loads the program stored in `length` bytes of the open file `fileDescriptor` at `offset`:
  /// a model inside another file (a zip entry stored without deflate, a resource in an archive),
  /// or any file the app holds open. The region is mapped in place when `offset` is a multiple
  /// of 16 (and `mmap` is true), read into memory otherwise; `isMapped` tells which. The
  /// descriptor is borrowed for the call: close it whenever you like afterwards.
  /// Throws `.outOfRange` for a region beyond the end of the file, `.invalidProgram` when there
  /// is no .pocket program at `offset` or `length` is too small for it, `.invalidArgument` for a
  /// descriptor that is not open; messages name fd, offset and length.
  public convenience init(fileDescriptor: Int32, offset: UInt64, length: UInt64, mmap: Bool = true) throws {
    var h: OpaquePointer?
    try check(pk_module_load_fd(fileDescriptor, offset, length, mmap ? PK_LOAD_MMAP : PK_LOAD_READ, &h))
    try self.init(handle: h)
  }

  /// True when the program is used in place from a file mapping (no copy).
  public var isMapped: Bool { pk_module_is_mapped(handle) != 0 }

  /// Loads a program from bytes in memory (copied).
  public convenience init(bytes: [UInt8]) throws {
    var h: OpaquePointer?
    try bytes.withUnsafeBytes { try check(pk_module_load_buffer($0.baseAddress, $0.count, &h)) }
    try self.init(handle: h)
  }

  private init(handle h: OpaquePointer?) throws {
    guard let h else { throw PocketError(.internal, "the runtime returned no module") }
    handle = h
    methodNames = (0..<pk_module_method_count(h)).compactMap { i in
      pk_module_method_name(h, i).map { String(cString: $0) }
    }
    var md: [String: String] = [:]
    for i in 0..<pk_module_metadata_count(h) {
      var key: UnsafePointer<CChar>?
      var value: UnsafePointer<CChar>?
      if pk_module_metadata_entry(h, i, &key, &value) == PK_STATUS_OK, let key, let value {
        md[String(cString: key)] = String(cString: value)
      }
    }
    metadata = md
  }

  deinit { pk_module_destroy(handle) }

  /// Threads kernels may use: 1 runs on the calling thread only; 0 (or less) is the default.
  public var numThreads: Int {
    get { lock.locked { threads } }
    set {
      lock.locked {
        threads = max(0, min(newValue, Int(Int32.max)))
        _ = pk_module_set_num_threads(handle, Int32(threads))
      }
    }
  }

  /// Dtype and shape bounds of each input of `method`. Throws `.notFound` for an unknown method.
  public func inputs(method: String = "forward") throws -> [TensorInfo] {
    try lock.locked { try info(method, input: true) }
  }

  /// Dtype and shape bounds of each output of `method`.
  public func outputs(method: String = "forward") throws -> [TensorInfo] {
    try lock.locked { try info(method, input: false) }
  }

  /// Runs "forward".
  public func forward(_ inputs: any ValueRepresentable...) throws -> [Value] {
    try execute(method: "forward", inputs)
  }

  /// Runs "forward".
  public func forward(_ inputs: [any ValueRepresentable]) throws -> [Value] {
    try execute(method: "forward", inputs)
  }

  /// Runs `method`.
  public func execute(method: String, _ inputs: any ValueRepresentable...) throws -> [Value] {
    try execute(method: method, inputs)
  }

  /// Runs `method` on `inputs` and returns its outputs (copies owned by Swift). Throws
  /// `.invalidArgument` for a wrong input count, dtype, rank or a size outside the bounds
  /// the method was exported with.
  public func execute(method: String, _ inputs: [any ValueRepresentable]) throws -> [Value] {
    try lock.locked {
      let values = inputs.map(\.pocketValue)
      var tensors: [AnyTensor] = []
      tensors.reserveCapacity(values.count)
      for (i, value) in values.enumerated() {
        if case .tensor(let t) = value {
          tensors.append(t)
        } else {
          tensors.append(try scalarInput(value, method: method, index: i))
        }
      }
      var handles: [OpaquePointer?] = []
      return try withBorrowed(tensors, &handles) { handles in
        try method.withCString { name in
          var nOut = 0
          try check(pk_module_output_count(handle, name, &nOut))
          var outs = [OpaquePointer?](repeating: nil, count: nOut)
          try check(pk_module_execute(handle, name, handles, handles.count, &outs, nOut))
          defer { outs.forEach { pk_tensor_destroy($0) } }
          return try outs.map { try Value.tensor(copyOut($0)) }
        }
      }
    }
  }

  // ---- helpers (called under the lock) ---------------------------------------------------

  private func info(_ method: String, input: Bool) throws -> [TensorInfo] {
    try method.withCString { name in
      var n = 0
      try check(input ? pk_module_input_count(handle, name, &n) : pk_module_output_count(handle, name, &n))
      return try (0..<n).map { i in
        var dtype = PK_DTYPE_FLOAT32
        var ndim = 0
        var lo = [Int64](repeating: 0, count: Int(PK_MAX_DIMS))
        var hi = [Int64](repeating: 0, count: Int(PK_MAX_DIMS))
        try check(input
          ? pk_module_input_info(handle, name, i, &dtype, &ndim, &lo, &hi, Int(PK_MAX_DIMS))
          : pk_module_output_info(handle, name, i, &dtype, &ndim, &lo, &hi, Int(PK_MAX_DIMS)))
        return TensorInfo(dtype: try DType(checking: dtype), minShape: lo.prefix(ndim).map { Int($0) },
                          maxShape: hi.prefix(ndim).map { Int($0) })
      }
    }
  }

  /// Lends each tensor's memory to a borrowed pk_tensor for the duration of `body`.
  private func withBorrowed<R>(_ tensors: [AnyTensor], _ handles: inout [OpaquePointer?],
                               _ body: ([OpaquePointer?]) throws -> R) throws -> R {
    guard handles.count < tensors.count else { return try body(handles) }
    let t = tensors[handles.count]
    return try t.withUnsafeBytes { raw in
      var shape = t.shape.map { Int64($0) }
      var h: OpaquePointer?
      try check(pk_tensor_create_borrowed(t.dtype.cValue, &shape, shape.count,
                                          UnsafeMutableRawPointer(mutating: raw.baseAddress), raw.count, &h))
      defer { pk_tensor_destroy(h) }
      handles.append(h)
      return try withBorrowed(tensors, &handles, body)
    }
  }

  private func copyOut(_ t: OpaquePointer?) throws -> AnyTensor {
    let dtype = try DType(checking: pk_tensor_dtype(t))
    let shape = UnsafeBufferPointer(start: pk_tensor_shape(t), count: pk_tensor_ndim(t)).map { Int($0) }
    let raw = UnsafeRawBufferPointer(start: pk_tensor_data(t), count: pk_tensor_nbytes(t))
    return AnyTensor(dtype: dtype, shape: shape, storage: makeStorage(dtype, count: pk_tensor_numel(t), from: raw))
  }

  /// A scalar Value as the one-element tensor input `index` of `method` declares.
  private func scalarInput(_ value: Value, method: String, index: Int) throws -> AnyTensor {
    let infos = try info(method, input: true)
    guard index < infos.count else {
      throw PocketError(.invalidArgument, "method '\(method)' takes \(infos.count) inputs; input \(index) is extra")
    }
    let spec = infos[index]
    guard spec.minShape.allSatisfy({ $0 <= 1 }), spec.maxShape.allSatisfy({ $0 >= 1 }) else {
      throw PocketError(.invalidArgument, "method '\(method)' input \(index) is \(spec); "
        + "a scalar (\(value)) fits only a one-element input")
    }
    let bytes = try oneElement(value, as: spec.dtype, what: "method '\(method)' input \(index)")
    return try AnyTensor(dtype: spec.dtype, shape: Array(repeating: 1, count: spec.rank), bytes: bytes)
  }
}

/// The bytes of `value` (a scalar case) as one element of `dtype`.
func oneElement(_ value: Value, as dtype: DType, what: String) throws -> [UInt8] {
  let number: Double
  var integer: Int64?
  switch value {
  case .int(let n): number = Double(n); integer = n
  case .double(let x): number = x; integer = Int64(exactly: x)
  case .bool(let b): number = b ? 1 : 0; integer = b ? 1 : 0
  case .tensor: throw PocketError(.internal, "oneElement called with a tensor")
  }
  func bytes<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
  func exact<T: FixedWidthInteger>(_: T.Type) throws -> [UInt8] {
    guard let i = integer, let v = T(exactly: i) else {
      throw PocketError(.invalidArgument, "\(what) is \(dtype); \(value) does not fit it")
    }
    return bytes(v)
  }
  switch dtype {
  case .float32: return bytes(Float(number))
  case .float64: return bytes(number)
  case .bfloat16:
    let f = Float(number).bitPattern  // round to nearest even
    return bytes(UInt16(truncatingIfNeeded: (f &+ 0x7FFF &+ ((f >> 16) & 1)) >> 16))
  case .float16:
#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    return bytes(Float16(number))
#else
    throw PocketError(.unsupported, "\(what) is float16, which Swift lacks on this platform; pass an AnyTensor")
#endif
  case .int8: return try exact(Int8.self)
  case .uint8: return try exact(UInt8.self)
  case .int16: return try exact(Int16.self)
  case .int32: return try exact(Int32.self)
  case .int64: return try exact(Int64.self)
  case .bool: return [number != 0 ? 1 : 0]
  }
}
