#include "pocket/value.h"

namespace pocket {

int64_t IntList::operator[](size_t i) const { return values[items[i]].i; }

Tensor* TensorList::operator[](size_t i) const {
  int32_t v = items[i];
  return v < 0 ? nullptr : &values[v].tensor;
}

double Value::to_double() const {
  switch (tag) {
    case Tag::Int: return static_cast<double>(i);
    case Tag::Double: return d;
    case Tag::Bool: return b ? 1.0 : 0.0;
    default: return 0.0;
  }
}

const char* value_tag_name(Value::Tag t) {
  switch (t) {
    case Value::Tag::None: return "None";
    case Value::Tag::Int: return "int";
    case Value::Tag::Double: return "double";
    case Value::Tag::Bool: return "bool";
    case Value::Tag::String: return "string";
    case Value::Tag::IntList: return "int list";
    case Value::Tag::DoubleList: return "double list";
    case Value::Tag::BoolList: return "bool list";
    case Value::Tag::Tensor: return "tensor";
    case Value::Tag::TensorList: return "tensor list";
    case Value::Tag::OptionalTensorList: return "optional tensor list";
  }
  return "unknown";
}

}  // namespace pocket
