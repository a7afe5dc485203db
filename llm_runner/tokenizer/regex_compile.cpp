// Regex::compile: pattern -> syntax tree -> node graph (see regex.h for the supported syntax).
#include <algorithm>

#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {
namespace {

constexpr uint32_t kInfinite = 0xFFFFFFFF;
constexpr uint32_t kMaxUnrolled = 16;  // a quantified group {n,m} is copied m times
constexpr int kMaxDepth = 32;          // nested groups
constexpr size_t kMaxNodes = 2048;     // matching recurses at most this deep

uint32_t word_mask() {
  return category_mask("L") | category_mask("M") | category_mask("Nd") | category_mask("Pc");
}

}  // namespace

// ---- parsing (pattern -> syntax tree) and compiling (tree -> node graph)

class RegexCompiler {
 public:
  RegexCompiler(Regex* re, std::string* error) : re_(re), error_(error) {}

  bool run(std::string_view pattern) {
    for (size_t i = 0; i < pattern.size();) {
      size_t len = 0;
      pat_.push_back(utf8_decode(pattern.data() + i, pattern.size() - i, &len));
      i += len;
    }
    int root = alternation(false);
    if (root < 0) return false;
    if (i_ < pat_.size()) return fail("unbalanced ')'");
    re_->nodes_.clear();
    re_->nodes_.push_back(Regex::Node{});
    re_->nodes_[0].kind = Regex::Node::Accept;
    re_->start_ = emit(root, 0);
    if (re_->start_ < 0) return fail("pattern too large (over 2048 nodes)");
    return true;
  }

 private:
  struct Ast {
    enum Kind : uint8_t { Char, Seq, Alt, Repeat, Look, Bol, Eol } kind;
    explicit Ast(Kind k) : kind(k) {}
    int cls = -1;
    std::vector<int> kids;
    uint32_t min = 0, max = 0;
    Regex::Quant quant = Regex::Quant::Greedy;
    bool negate = false;
  };

  bool fail(const std::string& what) {
    *error_ = what + " at character " + std::to_string(i_);
    return false;
  }
  int fail_construct(size_t len) {
    std::string s;
    for (size_t k = i_; k < std::min(pat_.size(), i_ + len); ++k) utf8_append(pat_[k], &s);
    fail("unsupported regex construct '" + s + "'");
    return -1;
  }
  bool peek(uint32_t c, size_t ahead = 0) const { return i_ + ahead < pat_.size() && pat_[i_ + ahead] == c; }
  int add(Ast a) {
    ast_.push_back(std::move(a));
    return static_cast<int>(ast_.size() - 1);
  }
  int add_class(Regex::CharClass c) {
    re_->classes_.push_back(std::move(c));
    return static_cast<int>(re_->classes_.size() - 1);
  }
  int literal(uint32_t cp, bool icase) {
    Regex::CharClass c;
    c.items.push_back({Regex::ClassItem::Range, cp, cp, 0});
    c.icase = icase;
    Ast a{Ast::Char};
    a.cls = add_class(std::move(c));
    return add(std::move(a));
  }

  int alternation(bool icase) {
    Ast alt{Ast::Alt};
    for (;;) {
      int s = sequence(&icase);
      if (s < 0) return -1;
      alt.kids.push_back(s);
      if (!peek('|')) break;
      ++i_;
    }
    return alt.kids.size() == 1 ? alt.kids[0] : add(std::move(alt));
  }

  int sequence(bool* icase) {
    Ast seq{Ast::Seq};
    while (i_ < pat_.size() && !peek('|') && !peek(')')) {
      bool skip = false;
      int atom_index = atom(icase, &skip);
      if (atom_index < 0) return -1;
      if (skip) continue;  // an inline flag group such as (?i)
      int q = quantifier(atom_index);
      if (q < 0) return -1;
      seq.kids.push_back(q);
    }
    return seq.kids.size() == 1 ? seq.kids[0] : add(std::move(seq));
  }

  bool number(uint32_t* out) {
    size_t start = i_;
    uint64_t v = 0;
    while (i_ < pat_.size() && pat_[i_] >= '0' && pat_[i_] <= '9' && v < 100000) v = v * 10 + (pat_[i_++] - '0');
    *out = static_cast<uint32_t>(v);
    return i_ > start;
  }

  int quantifier(int atom_index) {
    uint32_t min, max;
    if (peek('?')) {
      min = 0, max = 1, ++i_;
    } else if (peek('*')) {
      min = 0, max = kInfinite, ++i_;
    } else if (peek('+')) {
      min = 1, max = kInfinite, ++i_;
    } else if (peek('{') && i_ + 1 < pat_.size() && pat_[i_ + 1] >= '0' && pat_[i_ + 1] <= '9') {
      ++i_;
      number(&min);
      max = min;
      if (peek(',')) {
        ++i_;
        if (!number(&max)) max = kInfinite;
      }
      if (!peek('}') || max < min) return fail("bad {n,m} quantifier"), -1;
      ++i_;
    } else {
      return atom_index;
    }
    Ast r{Ast::Repeat};
    r.kids = {atom_index};
    r.min = min, r.max = max;
    if (peek('?')) r.quant = Regex::Quant::Lazy, ++i_;
    else if (peek('+')) r.quant = Regex::Quant::Possessive, ++i_;
    if (ast_[atom_index].kind != Ast::Char &&
        (max == kInfinite || max > kMaxUnrolled || r.quant == Regex::Quant::Possessive))
      return fail("unsupported quantifier on a group (only ? and {n,m} with m <= 16)"), -1;
    return add(std::move(r));
  }

  int group(bool* icase, bool* skip) {
    if (++depth_ > kMaxDepth) return fail("groups nested deeper than 32"), -1;
    ++i_;  // '('
    bool inner_icase = *icase;
    int kind = 0;  // 0 group, 1 lookahead, 2 negative lookahead
    if (peek('?')) {
      if (peek(':', 1)) {
        i_ += 2;
      } else if (peek('=', 1) || peek('!', 1)) {
        kind = peek('=', 1) ? 1 : 2;
        i_ += 2;
      } else if (peek('i', 1) && (peek(':', 2) || peek(')', 2))) {
        bool inline_flag = peek(')', 2);
        i_ += 3;
        if (inline_flag) {  // (?i): the rest of the enclosing group is case-insensitive
          *icase = true;
          *skip = true;
          return 0;
        }
        inner_icase = true;
      } else {
        --i_;
        return fail_construct(3);
      }
    }
    int inner = alternation(inner_icase);
    if (inner < 0) return -1;
    if (!peek(')')) return fail("missing ')'"), -1;
    ++i_;
    --depth_;
    if (kind == 0) return inner;
    Ast look{Ast::Look};
    look.kids = {inner};
    look.negate = kind == 2;
    return add(std::move(look));
  }

  int atom(bool* icase, bool* skip) {
    uint32_t c = pat_[i_];
    if (c == '(') return group(icase, skip);
    if (c == '[') return char_class(*icase);
    if (c == '^' || c == '$') {
      ++i_;
      return add(Ast{c == '^' ? Ast::Bol : Ast::Eol});
    }
    if (c == '.') {
      ++i_;
      Regex::CharClass cls;
      cls.any_but_newline = true;
      Ast a{Ast::Char};
      a.cls = add_class(std::move(cls));
      return add(std::move(a));
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') return fail_construct(1);
    if (c != '\\') {
      ++i_;
      return literal(c, *icase);
    }
    Regex::CharClass cls;
    cls.icase = *icase;
    if (!escape(&cls)) return -1;
    Ast a{Ast::Char};
    a.cls = add_class(std::move(cls));
    return add(std::move(a));
  }

  bool hex(size_t digits, uint32_t* out) {
    *out = 0;
    for (size_t k = 0; k < digits; ++k, ++i_) {
      if (i_ >= pat_.size()) return fail("truncated escape");
      uint32_t c = pat_[i_], d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
      else if (c == '}' && digits == 8 && k > 0) return true;  // \x{...}
      else return fail("bad hex digit in an escape");
      *out = *out * 16 + d;
    }
    return true;
  }

  bool category(bool negated, Regex::CharClass* cls) {
    std::string name;
    if (peek('{')) {
      ++i_;
      while (i_ < pat_.size() && pat_[i_] != '}') utf8_append(pat_[i_++], &name);
      if (!peek('}')) return fail("missing '}' in \\p{...}");
      ++i_;
    } else if (i_ < pat_.size()) {
      utf8_append(pat_[i_++], &name);
    }
    uint32_t mask = category_mask(name);
    if (mask == 0) return fail("unknown Unicode category '" + name + "'");
    cls->items.push_back({negated ? Regex::ClassItem::NotCategory : Regex::ClassItem::Category, 0, 0, mask});
    return true;
  }

  // Parses the escape at '\'; adds a class item (or a one-code-point range) to *cls and sets
  // *single to the code point when the escape is a literal.
  bool escape(Regex::CharClass* cls, uint32_t* single = nullptr) {
    ++i_;
    if (i_ >= pat_.size()) return fail("pattern ends in '\\'");
    uint32_t c = pat_[i_++];
    using I = Regex::ClassItem;
    switch (c) {
      case 's': cls->items.push_back({I::Space, 0, 0, 0}); return true;
      case 'S': cls->items.push_back({I::NotSpace, 0, 0, 0}); return true;
      case 'd': cls->items.push_back({I::Category, 0, 0, category_mask("Nd")}); return true;
      case 'D': cls->items.push_back({I::NotCategory, 0, 0, category_mask("Nd")}); return true;
      case 'w': cls->items.push_back({I::Word, 0, 0, word_mask()}); return true;
      case 'W': cls->items.push_back({I::NotWord, 0, 0, word_mask()}); return true;
      case 'p': return category(false, cls);
      case 'P': return category(true, cls);
      case 'r': c = '\r'; break;
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'f': c = '\f'; break;
      case 'v': c = '\v'; break;
      case 'x':
        if (peek('{')) {
          ++i_;
          if (!hex(8, &c)) return false;
          if (!peek('}')) return fail("missing '}' in \\x{...}");
          ++i_;
        } else if (!hex(2, &c)) {
          return false;
        }
        break;
      case 'u':
        if (!hex(4, &c)) return false;
        break;
      default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
          i_ -= 2;
          return fail_construct(2), false;
        }
    }
    cls->items.push_back({I::Range, c, c, 0});
    if (single) *single = c;
    return true;
  }

  int char_class(bool icase) {
    ++i_;  // '['
    Regex::CharClass cls;
    cls.icase = icase;
    if (peek('^')) cls.negated = true, ++i_;
    bool first = true;
    while (i_ < pat_.size() && (!peek(']') || first)) {
      first = false;
      uint32_t lo = pat_[i_];
      if (lo == '[') return fail_construct(2);
      bool literal_lo = true;
      if (lo == '\\') {
        uint32_t single = kInfinite;
        if (!escape(&cls, &single)) return -1;
        literal_lo = single != kInfinite;
        lo = single;
        if (literal_lo) cls.items.pop_back();
      } else {
        ++i_;
      }
      if (!literal_lo) continue;
      uint32_t hi = lo;
      if (peek('-') && i_ + 1 < pat_.size() && pat_[i_ + 1] != ']') {
        ++i_;
        hi = pat_[i_];
        if (hi == '\\') {
          uint32_t single = kInfinite;
          Regex::CharClass scratch;
          if (!escape(&scratch, &single)) return -1;
          if (single == kInfinite) return fail("bad range in a character class"), -1;
          hi = single;
        } else {
          ++i_;
        }
        if (hi < lo) return fail("bad range in a character class"), -1;
      }
      cls.items.push_back({Regex::ClassItem::Range, lo, hi, 0});
    }
    if (!peek(']')) return fail("missing ']'"), -1;
    ++i_;
    Ast a{Ast::Char};
    a.cls = add_class(std::move(cls));
    return add(std::move(a));
  }

  int node(Regex::Node n) {
    if (re_->nodes_.size() >= kMaxNodes) return -1;
    re_->nodes_.push_back(std::move(n));
    return static_cast<int>(re_->nodes_.size() - 1);
  }

  // Emits the graph for ast[a] followed by `next`; returns its start node.
  int emit(int a, int next) {
    if (next < 0 || re_->nodes_.size() >= kMaxNodes) return -1;
    const Ast ast = ast_[a];
    Regex::Node n;
    switch (ast.kind) {
      case Ast::Char: n.kind = Regex::Node::Char, n.cls = ast.cls, n.next = next; return node(n);
      case Ast::Bol: n.kind = Regex::Node::Bol, n.next = next; return node(n);
      case Ast::Eol: n.kind = Regex::Node::Eol, n.next = next; return node(n);
      case Ast::Seq:
        for (size_t k = ast.kids.size(); k-- > 0;) next = emit(ast.kids[k], next);
        return next;
      case Ast::Alt:
        n.kind = Regex::Node::Split;
        for (int kid : ast.kids) n.branches.push_back(emit(kid, next));
        return node(n);
      case Ast::Look:
        n.kind = Regex::Node::Look, n.negate = ast.negate, n.next = next;
        n.sub = emit(ast.kids[0], 0);
        return node(n);
      case Ast::Repeat: return emit_repeat(ast, next);
    }
    return -1;
  }

  int emit_repeat(const Ast& ast, int next) {
    Regex::Node n;
    if (ast_[ast.kids[0]].kind == Ast::Char) {
      n.kind = Regex::Node::Repeat, n.cls = ast_[ast.kids[0]].cls, n.next = next;
      n.min = ast.min, n.max = ast.max, n.quant = ast.quant;
      return node(n);
    }
    int tail = next;  // optional copies, innermost first
    for (uint32_t k = ast.min; k < ast.max; ++k) {
      Regex::Node split;
      split.kind = Regex::Node::Split;
      int take = emit(ast.kids[0], tail);
      split.branches = ast.quant == Regex::Quant::Lazy ? std::vector<int>{next, take} : std::vector<int>{take, next};
      tail = node(split);
    }
    for (uint32_t k = 0; k < ast.min; ++k) tail = emit(ast.kids[0], tail);
    return tail;
  }

  Regex* re_;
  std::string* error_;
  std::vector<uint32_t> pat_;
  size_t i_ = 0;
  std::vector<Ast> ast_;
  int depth_ = 0;
};

bool Regex::compile(std::string_view pattern, std::string* error) {
  classes_.clear();
  nodes_.clear();
  start_ = -1;
  RegexCompiler compiler(this, error);
  return compiler.run(pattern);
}

}  // namespace detail
}  // namespace pocket
