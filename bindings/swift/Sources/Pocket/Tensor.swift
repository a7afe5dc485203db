// Tensor<Scalar>: a shape and its scalars in row-major (contiguous) order, with value
// semantics. It is what apps build inputs from and read outputs into.

/// A dense tensor of `Scalar` elements in row-major order.
///
///     let image = try Tensor<Float>(shape: [1, 3, 224, 224], scalars: pixels)
///     let logits: Tensor<Float> = try module.forward(image)[0].tensor()
///     print(logits.shape, logits.scalars.prefix(5))
///
/// Building one checks that the scalars fill the shape exactly; a mismatch throws.
public struct Tensor<Scalar: TensorElement>: Sendable {
  /// Sizes of the dimensions; `[]` for a 0-dimensional (one-element) tensor.
  public let shape: [Int]
  /// The elements, row-major; `scalars.count` equals the product of `shape`.
  public let scalars: [Scalar]

  /// A tensor of `shape` over `scalars`. Throws `.invalidArgument` when a dimension is negative
  /// or the count of scalars is not the product of the shape.
  public init(shape: [Int], scalars: [Scalar]) throws {
    try Scalar.checkLayout()
    let count = try elementCount(of: shape)
    guard count == scalars.count else {
      throw PocketError(.invalidArgument, "shape \(shape) holds \(count) elements, "
        + "\(scalars.count) scalars given")
    }
    self.shape = shape
    self.scalars = scalars
  }

  /// A tensor of `shape` with every element equal to `value`.
  public init(shape: [Int], repeating value: Scalar) throws {
    try self.init(shape: shape, scalars: Array(repeating: value, count: try elementCount(of: shape)))
  }

  /// A one-dimensional tensor of `scalars`.
  public init(_ scalars: [Scalar]) {
    self.shape = [scalars.count]
    self.scalars = scalars
  }

  /// For the module itself: shape and count already agree.
  init(unchecked shape: [Int], _ scalars: [Scalar]) {
    self.shape = shape
    self.scalars = scalars
  }

  public static var dtype: DType { Scalar.dtype }
  public var dtype: DType { Scalar.dtype }
  /// Number of dimensions.
  public var rank: Int { shape.count }
  /// Number of elements.
  public var count: Int { scalars.count }

  /// The same scalars under another shape with as many elements.
  public func reshaped(to newShape: [Int]) throws -> Tensor {
    try Tensor(shape: newShape, scalars: scalars)
  }
}

extension Tensor: Equatable where Scalar: Equatable {}

extension Tensor: CustomStringConvertible {
  public var description: String {
    let head = scalars.prefix(8).map { "\($0)" }.joined(separator: ", ")
    return "Tensor<\(Scalar.self)>(shape: \(shape), scalars: [\(head)\(scalars.count > 8 ? ", ..." : "")])"
  }
}

/// Product of `shape`; throws for a negative dimension or an overflow.
func elementCount(of shape: [Int]) throws -> Int {
  var n = 1
  for (d, size) in shape.enumerated() {
    guard size >= 0 else {
      throw PocketError(.invalidArgument, "shape \(shape) has a negative size at dim \(d)")
    }
    let (product, overflow) = n.multipliedReportingOverflow(by: size)
    guard !overflow else { throw PocketError(.invalidArgument, "shape \(shape) is too large") }
    n = product
  }
  return n
}
