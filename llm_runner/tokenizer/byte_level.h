// GPT-2's byte-level alphabet: every byte has a printable stand-in character, so byte-level
// BPE vocabularies can be stored as text ("Ġthe" is " the"; 'Ġ' is U+0120 for byte 0x20).
// Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68
// bytes map to U+0100.. in byte order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pocket {
namespace detail {

uint32_t byte_to_unicode(uint8_t byte);

// The bytes spelled by `text` in the byte-level alphabet. False (and *out unspecified) when
// text has a character outside the alphabet.
bool byte_level_decode(std::string_view text, std::string* out);

// The byte-level spelling of raw bytes.
std::string byte_level_encode(std::string_view bytes);

}  // namespace detail
}  // namespace pocket
