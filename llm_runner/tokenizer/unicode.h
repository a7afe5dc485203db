// Unicode properties the tokenizers need, from the generated tables in unicode_tables.inc:
// general categories (for \p{..} and \s in split patterns), canonical combining classes and
// decompositions (for the NFC normalizer). Bad-byte code points (utf8.h) are in category Cn.
#pragma once

#include <cstdint>
#include <string>

namespace pocket {
namespace detail {

// In the order of kCategoryNames in unicode_tables.inc.
enum class Category : uint8_t {
  Cn, Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po,
  Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co,
};

Category unicode_category(uint32_t cp);

// Name lookups for \p{..}: "L" / "Lu" / ... / "Letter". Returns a bit mask over Category
// values (bit i for Category i), 0 for an unknown name.
uint32_t category_mask(const std::string& name);

inline uint32_t category_bit(Category c) { return 1u << static_cast<unsigned>(c); }

bool is_letter(uint32_t cp);  // L*
bool is_number(uint32_t cp);  // N*
// The Unicode White_Space property: U+0009..U+000D, U+0085 and categories Zs, Zl, Zp.
bool is_whitespace(uint32_t cp);

// Simple case folding for case-insensitive literals: ASCII letters, U+017F (long s) and
// U+212A (Kelvin sign) fold to ASCII; everything else folds to itself.
uint32_t case_fold(uint32_t cp);

uint8_t combining_class(uint32_t cp);

// Canonical composition (NFC) of UTF-8 text; invalid bytes pass through unchanged.
std::string nfc(const std::string& text);

}  // namespace detail
}  // namespace pocket
