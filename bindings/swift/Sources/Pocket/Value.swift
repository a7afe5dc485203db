// Value: what a method takes and returns. Version 1 of the C API moves tensors only; the
// scalar cases are a convenience for inputs such as an LLM's position, which the Module turns
// into a one-element tensor of the dtype and rank the method declares.

/// An input or output of a method.
///
///     let outputs = try module.execute(method: "decode", [.tensor(AnyTensor(token)), .int(position)])
///     let logits: Tensor<Float> = try outputs[0].tensor()
public enum Value: Sendable, Equatable {
  case tensor(AnyTensor)
  /// As an input: a one-element tensor of the input's declared dtype holding this number.
  case int(Int64)
  /// As an input: a one-element tensor of the input's declared floating-point dtype.
  case double(Double)
  /// As an input: a one-element bool tensor.
  case bool(Bool)

  /// The tensor this value holds; throws `.invalidArgument` for a scalar value.
  public func anyTensor() throws -> AnyTensor {
    guard case .tensor(let t) = self else {
      throw PocketError(.invalidArgument, "the value is \(self), not a tensor")
    }
    return t
  }

  /// The tensor this value holds, with its element type; throws `.invalidArgument` for a scalar
  /// value or when `Scalar` is not the tensor's dtype.
  public func tensor<Scalar: TensorElement>(as type: Scalar.Type = Scalar.self) throws -> Tensor<Scalar> {
    try anyTensor().tensor(as: type)
  }

  /// The elements of the tensor this value holds, checked like `tensor()`.
  public func scalars<Scalar: TensorElement>(as type: Scalar.Type = Scalar.self) throws -> [Scalar] {
    try anyTensor().tensor(as: type).scalars
  }
}

/// Anything a method accepts as an input: `Tensor`, `AnyTensor` or `Value`.
public protocol ValueRepresentable {
  var pocketValue: Value { get }
}

extension Value: ValueRepresentable {
  public var pocketValue: Value { self }
}

extension AnyTensor: ValueRepresentable {
  public var pocketValue: Value { .tensor(self) }
}

extension Tensor: ValueRepresentable {
  public var pocketValue: Value { .tensor(AnyTensor(self)) }
}

extension Value: CustomStringConvertible {
  public var description: String {
    switch self {
    case .tensor(let t): return t.description
    case .int(let n): return "\(n)"
    case .double(let x): return "\(x)"
    case .bool(let b): return "\(b)"
    }
  }
}
