// Value: what a program's value table holds, an int, double, bool, string, list or tensor.
//
// Lists of ints and tensors hold value indices into the method's value table (so list items
// can be results computed at run time, e.g. symbolic sizes); IntList/TensorList read through.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocket/tensor.h"

namespace pocket {

struct Value;

// Items of an int list, read through the value table (each item is an Int value).
struct IntList {
  const uint32_t* items = nullptr;  // points into the program (flatbuffer), not owned
  size_t size = 0;
  const Value* values = nullptr;    // the method's value table
  int64_t operator[](size_t i) const;
};

// Tensors of a tensor list; `optional` lists may hold None (index -1).
struct TensorList {
  const int32_t* items = nullptr;  // value indices; -1 is None (optional lists only)
  size_t size = 0;
  Value* values = nullptr;
  // nullptr for a None item.
  Tensor* operator[](size_t i) const;
};

struct DoubleList {
  const double* items = nullptr;
  size_t size = 0;
  double operator[](size_t i) const { return items[i]; }
};

struct BoolList {
  const uint8_t* items = nullptr;
  size_t size = 0;
  bool operator[](size_t i) const { return items[i] != 0; }
};

struct Value {
  enum class Tag : uint8_t {
    None,
    Int,
    Double,
    Bool,
    String,
    IntList,
    DoubleList,
    BoolList,
    Tensor,
    TensorList,
    OptionalTensorList,
  };

  Tag tag = Tag::None;
  union {
    int64_t i;
    double d;
    bool b;
    struct {
      const char* data;
      size_t size;
    } str;
    pocket::IntList int_list;
    pocket::DoubleList double_list;
    pocket::BoolList bool_list;
    pocket::Tensor tensor;
    pocket::TensorList tensor_list;
  };

  Value() : i(0) {}

  bool is_none() const { return tag == Tag::None; }
  bool is_tensor() const { return tag == Tag::Tensor; }
  bool is_int() const { return tag == Tag::Int; }
  // An int, double or bool, as a double (for Scalar arguments).
  double to_double() const;
  // True when the scalar is an Int or Bool (integral arithmetic applies).
  bool is_integral_scalar() const { return tag == Tag::Int || tag == Tag::Bool; }
};

const char* value_tag_name(Value::Tag t);

}  // namespace pocket
