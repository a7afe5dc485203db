// Element types: DType mirrors pk_dtype (same numbers as the file format), and TensorElement
// maps a Swift scalar type to its DType, so Tensor<Float> is a float32 tensor.
import CPocket

/// The element type of a tensor; raw values are pocket.h's `pk_dtype` numbers.
public enum DType: Int, Sendable, CaseIterable, CustomStringConvertible {
  case float32 = 0
  case float16 = 1
  case bfloat16 = 2
  case float64 = 3
  case int8 = 4
  case uint8 = 5
  case int16 = 6
  case int32 = 7
  case int64 = 8
  case bool = 9

  /// Bytes per element.
  public var size: Int { Int(pk_dtype_size(cValue)) }

  /// "float32", "int64", ... (the runtime's names, as in its error messages).
  public var name: String { String(cString: pk_dtype_name(cValue)) }

  public var description: String { name }

  var cValue: pk_dtype { pk_dtype(rawValue: UInt32(rawValue)) }

  init(checking value: pk_dtype) throws {
    guard let d = DType(rawValue: Int(value.rawValue)) else {
      throw PocketError(.internal, "the runtime returned unknown dtype \(value.rawValue)")
    }
    self = d
  }
}

/// A Swift type that can be the element of a `Tensor`: its memory layout is that of `dtype`.
///
/// Pocket conforms Float, Double, Float16 (where Swift has it), Int8, Int16, Int32, Int64 and
/// UInt8. Tensors of bfloat16 or bool travel as `AnyTensor` (raw bytes).
public protocol TensorElement: Sendable {
  static var dtype: DType { get }
}

extension Float: TensorElement { public static var dtype: DType { .float32 } }
extension Double: TensorElement { public static var dtype: DType { .float64 } }
extension Int8: TensorElement { public static var dtype: DType { .int8 } }
extension UInt8: TensorElement { public static var dtype: DType { .uint8 } }
extension Int16: TensorElement { public static var dtype: DType { .int16 } }
extension Int32: TensorElement { public static var dtype: DType { .int32 } }
extension Int64: TensorElement { public static var dtype: DType { .int64 } }

// Swift has no Float16 on Intel Macs (it exists on Apple silicon, iOS and Linux).
#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
extension Float16: TensorElement { public static var dtype: DType { .float16 } }
#endif

extension TensorElement {
  /// Throws unless the type's memory layout matches its dtype (guards conformances made
  /// outside Pocket).
  static func checkLayout() throws {
    guard MemoryLayout<Self>.stride == dtype.size else {
      throw PocketError(.invalidArgument, "\(Self.self) has \(MemoryLayout<Self>.stride)-byte elements, "
        + "but its dtype \(dtype) has \(dtype.size)")
    }
  }
}
