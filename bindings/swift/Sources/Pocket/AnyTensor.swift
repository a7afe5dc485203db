// AnyTensor: a tensor whose element type is known only at run time (what a method returns).
// Its storage is a typed Swift array when the dtype has a TensorElement type, so converting
// back with tensor() costs nothing; other dtypes (bfloat16, bool) are raw bytes.
import CPocket

/// A type-erased tensor: dtype, shape and the elements' bytes.
///
///     let out: AnyTensor = try module.forward(input)[0].anyTensor()
///     if out.dtype == .float32 { let y: Tensor<Float> = try out.tensor() }
public struct AnyTensor: Sendable {
  public let dtype: DType
  public let shape: [Int]
  let storage: any ScalarStorage

  /// Erases the element type of `tensor` (no copy).
  public init<Scalar>(_ tensor: Tensor<Scalar>) {
    dtype = Scalar.dtype
    shape = tensor.shape
    storage = tensor.scalars
  }

  /// A tensor of any dtype from its raw little-endian bytes (row-major). Throws
  /// `.invalidArgument` when `bytes.count` is not the shape's element count times the dtype size.
  public init(dtype: DType, shape: [Int], bytes: [UInt8]) throws {
    let count = try elementCount(of: shape)
    let (needed, overflow) = count.multipliedReportingOverflow(by: dtype.size)
    guard !overflow, needed == bytes.count else {
      throw PocketError(.invalidArgument, "a \(dtype) tensor of shape \(shape) has \(count * dtype.size) bytes, "
        + "\(bytes.count) given")
    }
    self.dtype = dtype
    self.shape = shape
    self.storage = bytes.withUnsafeBytes { makeStorage(dtype, count: count, from: $0) }
  }

  init(dtype: DType, shape: [Int], storage: any ScalarStorage) {
    self.dtype = dtype
    self.shape = shape
    self.storage = storage
  }

  public var rank: Int { shape.count }
  /// Number of elements.
  public var count: Int { shape.reduce(1, *) }

  /// A copy of the elements' bytes.
  public var bytes: [UInt8] { storage.withRawBytes { Array($0) } }

  /// The tensor with its element type. Throws `.invalidArgument` when `Scalar` is not the
  /// tensor's dtype (a float32 tensor is not readable as Int64).
  public func tensor<Scalar: TensorElement>(as type: Scalar.Type = Scalar.self) throws -> Tensor<Scalar> {
    guard Scalar.dtype == dtype else {
      throw PocketError(.invalidArgument, "the tensor holds \(dtype) elements; "
        + "it cannot be read as \(Scalar.self) (\(Scalar.dtype))")
    }
    try Scalar.checkLayout()
    if let scalars = storage as? [Scalar] { return Tensor(unchecked: shape, scalars) }
    let scalars = storage.withRawBytes { raw in
      [Scalar](unsafeUninitializedCapacity: raw.count / MemoryLayout<Scalar>.stride) { buf, n in
        UnsafeMutableRawBufferPointer(buf).copyMemory(from: raw)
        n = buf.count
      }
    }
    return Tensor(unchecked: shape, scalars)
  }

  /// The elements as `Scalar`, checked like `tensor()`.
  public func scalars<Scalar: TensorElement>(as type: Scalar.Type = Scalar.self) throws -> [Scalar] {
    try tensor(as: type).scalars
  }

  func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try storage.withRawBytes(body)
  }
}

extension AnyTensor: CustomStringConvertible {
  public var description: String { "AnyTensor(\(dtype), shape: \(shape))" }
}

extension AnyTensor: Equatable {
  /// Equal dtype, shape and bytes.
  public static func == (a: AnyTensor, b: AnyTensor) -> Bool {
    a.dtype == b.dtype && a.shape == b.shape
      && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
  }
}

/// Contiguous element storage: a [Scalar] for a TensorElement type, else [UInt8].
protocol ScalarStorage: Sendable {
  func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ScalarStorage where Element: TensorElement {
  func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(body)
  }
}

/// Copies `count` elements of `dtype` from `raw` into the storage best suited to the dtype.
func makeStorage(_ dtype: DType, count: Int, from raw: UnsafeRawBufferPointer) -> any ScalarStorage {
  func typed<T: TensorElement>(_: T.Type) -> [T] {
    [T](unsafeUninitializedCapacity: count) { buf, n in
      UnsafeMutableRawBufferPointer(buf).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw.prefix(count * MemoryLayout<T>.stride)))
      n = count
    }
  }
  switch dtype {
  case .float32: return typed(Float.self)
  case .float64: return typed(Double.self)
  case .int8: return typed(Int8.self)
  case .uint8: return typed(UInt8.self)
  case .int16: return typed(Int16.self)
  case .int32: return typed(Int32.self)
  case .int64: return typed(Int64.self)
#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
  case .float16: return typed(Float16.self)
#endif
  default: return Array(raw.prefix(count * dtype.size))
  }
}
