#include "tokenizer/unicode.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <unordered_map>
#include <vector>

#include "tokenizer/utf8.h"

namespace pocket {
namespace detail {
namespace {

#include "tokenizer/unicode_tables.inc"

// Hangul syllables compose and decompose algorithmically (Unicode chapter 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount;
constexpr uint32_t kSCount = kLCount * kNCount;

using C = Category;
constexpr uint32_t bits(std::initializer_list<C> cs) {
  uint32_t m = 0;
  for (C c : cs) m |= 1u << static_cast<unsigned>(c);
  return m;
}
constexpr uint32_t kLetters = bits({C::Lu, C::Ll, C::Lt, C::Lm, C::Lo});
constexpr uint32_t kNumbers = bits({C::Nd, C::Nl, C::No});
constexpr uint32_t kSeparators = bits({C::Zs, C::Zl, C::Zp});

// The run of a (start << shift | value) table containing cp.
template <size_t N>
uint32_t run_value(const uint32_t (&runs)[N], uint32_t cp, unsigned shift) {
  const uint32_t key = (cp << shift) | ((1u << shift) - 1);
  const uint32_t* it = std::upper_bound(runs, runs + N, key);
  return it == runs ? 0 : (it[-1] & ((1u << shift) - 1));
}

const Decomposition* find_decomposition(uint32_t cp) {
  auto less = [](const Decomposition& d, uint32_t c) { return (d.cp & 0x7FFFFFFF) < c; };
  const Decomposition* end = kDecompositions + sizeof kDecompositions / sizeof kDecompositions[0];
  const Decomposition* it = std::lower_bound(kDecompositions, end, cp, less);
  return it != end && (it->cp & 0x7FFFFFFF) == cp ? it : nullptr;
}

void decompose(uint32_t cp, std::vector<uint32_t>* out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    uint32_t s = cp - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition* d = is_bad_byte(cp) ? nullptr : find_decomposition(cp);
  if (d == nullptr) {
    out->push_back(cp);
    return;
  }
  decompose(d->first, out);
  if (d->second != 0) decompose(d->second, out);
}

uint32_t compose_pair(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  static const std::unordered_map<uint64_t, uint32_t> table = [] {
    std::unordered_map<uint64_t, uint32_t> t;
    for (const Decomposition& d : kDecompositions)
      if (d.cp & 0x80000000u) t[(uint64_t{d.first} << 32) | d.second] = d.cp & 0x7FFFFFFF;
    return t;
  }();
  auto it = table.find((uint64_t{a} << 32) | b);
  return it == table.end() ? 0 : it->second;
}

// Sorts each run of non-starters by combining class, keeping equal classes in order (an
// insertion sort: runs are a few marks long).
void canonical_order(std::vector<uint32_t>* cps) {
  std::vector<uint32_t>& v = *cps;
  for (size_t i = 1; i < v.size(); ++i) {
    uint8_t cls = combining_class(v[i]);
    if (cls == 0) continue;
    uint32_t cp = v[i];
    size_t j = i;
    for (; j > 0 && combining_class(v[j - 1]) > cls; --j) v[j] = v[j - 1];
    v[j] = cp;
  }
}

// Canonical composition of a decomposed, ordered sequence (UAX #15, section 9 sample code).
std::vector<uint32_t> compose(const std::vector<uint32_t>& cps) {
  std::vector<uint32_t> out;
  if (cps.empty()) return out;
  bool have_starter = false;
  size_t starter = 0;
  int last_class = 0;  // of the last code point appended
  for (uint32_t c : cps) {
    int cls = combining_class(c);
    if (have_starter && (last_class < cls || (last_class == 0 && starter + 1 == out.size()))) {
      uint32_t composite = compose_pair(out[starter], c);
      if (composite != 0) {
        out[starter] = composite;
        continue;
      }
    }
    if (cls == 0) {
      have_starter = true;
      starter = out.size();
    }
    last_class = cls;
    out.push_back(c);
  }
  return out;
}

}  // namespace

Category unicode_category(uint32_t cp) {
  if (cp > 0x10FFFF) return Category::Cn;
  return static_cast<Category>(run_value(kCategoryRuns, cp, 5));
}

uint32_t category_mask(const std::string& name) {
  if (name == "L" || name == "Letter") return kLetters;
  if (name == "M" || name == "Mark") return bits({C::Mn, C::Mc, C::Me});
  if (name == "N" || name == "Number") return kNumbers;
  if (name == "P" || name == "Punctuation")
    return bits({C::Pc, C::Pd, C::Ps, C::Pe, C::Pi, C::Pf, C::Po});
  if (name == "S" || name == "Symbol") return bits({C::Sm, C::Sc, C::Sk, C::So});
  if (name == "Z" || name == "Separator") return kSeparators;
  if (name == "C" || name == "Other") return bits({C::Cn, C::Cc, C::Cf, C::Cs, C::Co});
  for (size_t i = 0; i < sizeof kCategoryNames / sizeof kCategoryNames[0]; ++i)
    if (name == kCategoryNames[i]) return 1u << i;
  return 0;
}

bool is_letter(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return (kLetters & category_bit(unicode_category(cp))) != 0;
}

bool is_number(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return (kNumbers & category_bit(unicode_category(cp))) != 0;
}

bool is_whitespace(uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  if (cp == 0x85) return true;
  return (kSeparators & category_bit(unicode_category(cp))) != 0;
}

uint32_t case_fold(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp == 0x017F) return 's';
  if (cp == 0x212A) return 'k';
  return cp;
}

uint8_t combining_class(uint32_t cp) {
  if (cp < 0x300 || cp > 0x10FFFF) return 0;
  return static_cast<uint8_t>(run_value(kCombiningClasses, cp, 8));
}

std::string nfc(const std::string& text) {
  // Code points below U+0300 are NFC-stable and start no composition (checked by the
  // generator); their UTF-8 lead bytes are all below 0xCC.
  bool simple = std::none_of(text.begin(), text.end(),
                             [](char c) { return static_cast<unsigned char>(c) >= 0xCC; });
  if (simple) return text;
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = 0;
    decompose(utf8_decode(text.data() + i, text.size() - i, &len), &cps);
    i += len;
  }
  canonical_order(&cps);
  std::string out;
  out.reserve(text.size());
  for (uint32_t cp : compose(cps)) utf8_append(cp, &out);
  return out;
}

}  // namespace detail
}  // namespace pocket
