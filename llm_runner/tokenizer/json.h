// A small JSON reader for tokenizer.json (RFC 8259: objects, arrays, strings with \u escapes
// including surrogate pairs, numbers, true/false/null). Errors name the byte offset:
//   "truncated JSON at byte 1234", "invalid JSON at byte 17: expected ':' after an object key".
//
// The whole document lives in two flat arrays (values and unescaped string bytes), so a 9 MB
// tokenizer.json with ~400k strings costs ~24 bytes per value, not one heap block per string.
// Children of an array or object are contiguous; an object's children alternate key, value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {
namespace detail {

enum class JsonType : uint8_t { Missing, Null, Bool, Number, String, Array, Object };

const char* json_type_name(JsonType t);  // "missing", "null", "a boolean", "a number", ...

class JsonDoc;

// A view of one value in a JsonDoc (which must outlive it). A lookup that finds nothing yields
// a Missing value, so chains like v.get("model").get("type") need no checks in between.
class JsonRef {
 public:
  JsonRef() = default;
  JsonType type() const;
  bool missing() const { return type() == JsonType::Missing; }
  bool is_null() const { return type() == JsonType::Null; }
  bool is_string() const { return type() == JsonType::String; }
  bool is_number() const { return type() == JsonType::Number; }
  bool is_bool() const { return type() == JsonType::Bool; }
  bool is_array() const { return type() == JsonType::Array; }
  bool is_object() const { return type() == JsonType::Object; }

  std::string_view str() const;  // "" unless a string
  double number() const;         // 0 unless a number
  bool is_integer() const;       // a number without fraction or exponent, |n| <= 2^53
  int64_t integer() const;       // 0 unless is_integer()
  bool boolean() const;          // false unless a bool

  size_t size() const;                   // items of an array, members of an object, else 0
  JsonRef at(size_t i) const;            // array item i (Missing when out of range)
  std::string_view key(size_t i) const;  // object member i's key
  JsonRef value(size_t i) const;         // object member i's value
  JsonRef get(std::string_view key) const;  // the first member named key, or Missing

  uint64_t offset() const;  // byte offset of the value in the source text

 private:
  friend class JsonDoc;
  JsonRef(const JsonDoc* doc, uint32_t index) : doc_(doc), index_(index) {}
  const JsonDoc* doc_ = nullptr;
  uint32_t index_ = 0;
};

class JsonDoc {
 public:
  // Parses `size` bytes at `data` (not retained). On failure returns false, sets *error.
  bool parse(const char* data, size_t size, std::string* error);
  JsonRef root() const { return values_.empty() ? JsonRef() : JsonRef(this, root_); }

 private:
  friend class JsonRef;
  friend class JsonParser;
  struct Value {
    JsonType type;
    bool flag;      // Bool: the value; Number: is_integer
    uint32_t size;  // String: bytes; Array: items; Object: 2 * members
    uint64_t offset;
    union {
      double number;
      uint64_t index;  // String: start in chars_; Array/Object: first child in values_
    };
  };
  std::vector<Value> values_;
  std::string chars_;
  uint32_t root_ = 0;
};

}  // namespace detail
}  // namespace pocket
