#include "tokenizer/json.h"

#include <cmath>
#include <cstring>

#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {

const char* json_type_name(JsonType t) {
  switch (t) {
    case JsonType::Missing: return "missing";
    case JsonType::Null: return "null";
    case JsonType::Bool: return "a boolean";
    case JsonType::Number: return "a number";
    case JsonType::String: return "a string";
    case JsonType::Array: return "an array";
    case JsonType::Object: return "an object";
  }
  return "?";
}

// ---- JsonRef

JsonType JsonRef::type() const { return doc_ ? doc_->values_[index_].type : JsonType::Missing; }

std::string_view JsonRef::str() const {
  if (!is_string()) return {};
  const JsonDoc::Value& v = doc_->values_[index_];
  return std::string_view(doc_->chars_.data() + v.index, v.size);
}

double JsonRef::number() const { return is_number() ? doc_->values_[index_].number : 0.0; }
bool JsonRef::is_integer() const { return is_number() && doc_->values_[index_].flag; }
int64_t JsonRef::integer() const { return is_integer() ? static_cast<int64_t>(number()) : 0; }
bool JsonRef::boolean() const { return is_bool() && doc_->values_[index_].flag; }

size_t JsonRef::size() const {
  if (is_array()) return doc_->values_[index_].size;
  if (is_object()) return doc_->values_[index_].size / 2;
  return 0;
}

JsonRef JsonRef::at(size_t i) const {
  if (!is_array() || i >= size()) return {};
  return JsonRef(doc_, static_cast<uint32_t>(doc_->values_[index_].index + i));
}

std::string_view JsonRef::key(size_t i) const {
  if (!is_object() || i >= size()) return {};
  return JsonRef(doc_, static_cast<uint32_t>(doc_->values_[index_].index + 2 * i)).str();
}

JsonRef JsonRef::value(size_t i) const {
  if (!is_object() || i >= size()) return {};
  return JsonRef(doc_, static_cast<uint32_t>(doc_->values_[index_].index + 2 * i + 1));
}

JsonRef JsonRef::get(std::string_view k) const {
  for (size_t i = 0, n = size(); i < n; ++i)
    if (key(i) == k) return value(i);
  return {};
}

uint64_t JsonRef::offset() const { return doc_ ? doc_->values_[index_].offset : 0; }

// ---- parser

class JsonParser {
 public:
  JsonParser(JsonDoc* doc, const char* data, size_t size, std::string* error)
      : doc_(doc), p_(data), n_(size), error_(error) {}

  bool run() {
    JsonDoc::Value root;
    if (!value(&root, 0)) return false;
    skip_ws();
    if (pos_ != n_) return fail("trailing characters after the top-level value");
    doc_->values_.push_back(root);
    doc_->root_ = static_cast<uint32_t>(doc_->values_.size() - 1);
    return true;
  }

 private:
  static constexpr int kMaxDepth = 256;

  bool fail(const char* what) {
    if (pos_ >= n_) {
      *error_ = "truncated JSON at byte " + std::to_string(n_);
    } else {
      *error_ = "invalid JSON at byte " + std::to_string(pos_) + ": " + what;
    }
    return false;
  }

  void skip_ws() {
    while (pos_ < n_ && (p_[pos_] == ' ' || p_[pos_] == '\t' || p_[pos_] == '\n' || p_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char* word) {
    size_t len = std::strlen(word);
    for (size_t i = 0; i < len; ++i, ++pos_)
      if (pos_ >= n_ || p_[pos_] != word[i]) return fail("unknown literal");
    return true;
  }

  bool value(JsonDoc::Value* out, int depth) {
    skip_ws();
    if (pos_ >= n_) return fail("");
    if (depth > kMaxDepth) return fail("nested deeper than 256 levels");
    *out = JsonDoc::Value{};
    out->offset = pos_;
    switch (p_[pos_]) {
      case '{': return container(out, depth, '}');
      case '[': return container(out, depth, ']');
      case '"': return string(out);
      case 't': out->type = JsonType::Bool, out->flag = true; return literal("true");
      case 'f': out->type = JsonType::Bool; return literal("false");
      case 'n': out->type = JsonType::Null; return literal("null");
      default: return number(out);
    }
  }

  // Children are parsed onto stack_, then moved to the end of values_ as one block.
  bool container(JsonDoc::Value* out, int depth, char close) {
    bool is_object = close == '}';
    out->type = is_object ? JsonType::Object : JsonType::Array;
    ++pos_;
    size_t base = stack_.size();
    skip_ws();
    if (pos_ < n_ && p_[pos_] == close) {
      ++pos_;
    } else {
      for (;;) {
        JsonDoc::Value v;
        if (is_object) {
          skip_ws();
          if (pos_ < n_ && p_[pos_] != '"') return fail("expected a string key");
          if (!value(&v, depth + 1)) return false;
          stack_.push_back(v);
          skip_ws();
          if (pos_ >= n_ || p_[pos_] != ':') return fail("expected ':' after an object key");
          ++pos_;
        }
        if (!value(&v, depth + 1)) return false;
        stack_.push_back(v);
        skip_ws();
        if (pos_ < n_ && p_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < n_ && p_[pos_] == close) {
          ++pos_;
          break;
        }
        return fail(is_object ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    out->index = doc_->values_.size();
    out->size = static_cast<uint32_t>(stack_.size() - base);
    doc_->values_.insert(doc_->values_.end(), stack_.begin() + base, stack_.end());
    stack_.resize(base);
    return true;
  }

  bool hex4(uint32_t* out) {
    *out = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (pos_ >= n_) return fail("");
      char c = p_[pos_];
      uint32_t d = c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : 16;
      if (d == 16) return fail("bad hex digit in a \\u escape");
      *out = *out * 16 + d;
    }
    return true;
  }

  bool unicode_escape(std::string* chars) {
    uint32_t cp;
    if (!hex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (pos_ + 1 >= n_) return fail("");
      if (p_[pos_] != '\\' || p_[pos_ + 1] != 'u') return fail("lone high surrogate in a \\u escape");
      pos_ += 2;
      uint32_t lo;
      if (!hex4(&lo)) return false;
      if (lo < 0xDC00 || lo > 0xDFFF) return fail("high surrogate not followed by a low surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    utf8_append(cp, chars);
    return true;
  }

  bool string(JsonDoc::Value* out) {
    out->type = JsonType::String;
    std::string& chars = doc_->chars_;
    out->index = chars.size();
    ++pos_;
    for (;;) {
      size_t start = pos_;
      while (pos_ < n_ && p_[pos_] != '"' && p_[pos_] != '\\' && static_cast<unsigned char>(p_[pos_]) >= 0x20)
        ++pos_;
      chars.append(p_ + start, pos_ - start);
      if (pos_ >= n_) return fail("");
      char c = p_[pos_];
      if (c == '"') break;
      if (c != '\\') return fail("control character in a string");
      if (++pos_ >= n_) return fail("");
      char e = p_[pos_++];
      switch (e) {
        case '"': chars += '"'; break;
        case '\\': chars += '\\'; break;
        case '/': chars += '/'; break;
        case 'b': chars += '\b'; break;
        case 'f': chars += '\f'; break;
        case 'n': chars += '\n'; break;
        case 'r': chars += '\r'; break;
        case 't': chars += '\t'; break;
        case 'u':
          if (!unicode_escape(&chars)) return false;
          break;
        default: --pos_; return fail("unknown escape in a string");
      }
    }
    ++pos_;
    out->size = static_cast<uint32_t>(chars.size() - out->index);
    return true;
  }

  size_t digits(double* mantissa, int* count) {
    size_t start = pos_;
    while (pos_ < n_ && p_[pos_] >= '0' && p_[pos_] <= '9') {
      *mantissa = *mantissa * 10 + (p_[pos_] - '0');
      ++pos_;
      if (count) ++*count;
    }
    return pos_ - start;
  }

  bool number(JsonDoc::Value* out) {
    out->type = JsonType::Number;
    bool negative = pos_ < n_ && p_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= n_) return fail("");
    if (p_[pos_] < '0' || p_[pos_] > '9') return fail(negative ? "expected a digit" : "expected a value");
    double m = 0;
    bool leading_zero = p_[pos_] == '0';
    size_t int_digits = digits(&m, nullptr);
    if (leading_zero && int_digits > 1) return fail("leading zero in a number");
    int exp10 = 0;
    bool integral = true;
    if (pos_ < n_ && p_[pos_] == '.') {
      ++pos_;
      int frac = 0;
      if (digits(&m, &frac) == 0) return fail(pos_ >= n_ ? "" : "expected a digit after '.'");
      exp10 -= frac;
      integral = false;
    }
    if (pos_ < n_ && (p_[pos_] == 'e' || p_[pos_] == 'E')) {
      ++pos_;
      bool neg_exp = pos_ < n_ && p_[pos_] == '-';
      if (pos_ < n_ && (p_[pos_] == '-' || p_[pos_] == '+')) ++pos_;
      double e = 0;
      if (digits(&e, nullptr) == 0) return fail(pos_ >= n_ ? "" : "expected a digit in an exponent");
      exp10 += static_cast<int>(std::fmin(e, 100000.0)) * (neg_exp ? -1 : 1);
      integral = false;
    }
    double v = exp10 == 0 ? m : m * std::pow(10.0, exp10);
    out->number = negative ? -v : v;
    out->flag = integral && m <= 9007199254740992.0;
    return true;
  }

  JsonDoc* doc_;
  const char* p_;
  size_t n_;
  size_t pos_ = 0;
  std::string* error_;
  std::vector<JsonDoc::Value> stack_;
};

bool JsonDoc::parse(const char* data, size_t size, std::string* error) {
  values_.clear();
  chars_.clear();
  JsonParser parser(this, data, size, error);
  if (parser.run()) return true;
  values_.clear();
  chars_.clear();
  return false;
}

}  // namespace detail
}  // namespace pocket
