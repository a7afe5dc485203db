"""Builders for the tokenizer tests: tokenizers trained here (no downloads) with the Hugging Face
`tokenizers` library in the styles of GPT-2, Llama 3, Qwen2, SmolLM and Llama 2 / Mistral,
plus writers and small reference encoders for tiktoken files and llama2.c tokenizer.bin."""

import base64
import json
import random
import struct
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                  r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")

# ---- text

_PARAGRAPHS = [
    "The quick brown fox jumps over the lazy dog. Don't stop believing; I'M sure they'll come, WE'VE seen it.",
    "It's 2024-05-17 and the price is $1,234,567.89 (about 3.14159 per unit); call 555-0100 now!!!",
    "def tokenize(text: str) -> list[int]:\n    for i in range(10):\n        yield i ** 2  # squares\n\treturn None\n",
    "if (x != 0 && y >= 42) { printf(\"%d\\n\", x); } else { return -1; } // done",
    "Café, naïve, résumé, Ångström, Ærøskøbing, São Paulo, Zürich, façade, jalapeño, crème brûlée.",
    "Ελληνικά κείμενα, русский текст, עברית, العربية, हिन्दी, ภาษาไทย.",
    "日本語のテキストです。中文文本处理很有趣。한국어 텍스트도 있습니다。",
    "Emoji time 😀😃 👍🏽 family 👨‍👩‍👧‍👦 flag 🇺🇸 heart ❤️ keycap 1️⃣ done.",
    "    four spaces\n\n\nthree newlines\r\nwindows line\ttab\t\ttabs   trailing   \n",
    "Numbers: 0 12 345 6789 12345678901234567890 and ½ ² ³ Ⅻ ٣٤٥ ١٢.",
]


def training_corpus():
    rng = random.Random(1)
    lines = []
    for _ in range(40):
        for p in _PARAGRAPHS:
            words = p.split(" ")
            rng.shuffle(words)
            lines.append(p)
            lines.append(" ".join(words))
    return lines


def comparison_texts():
    """The mixed corpus every tokenizer is checked on."""
    texts = list(_PARAGRAPHS) + [
        "", " ", "  ", "\n", "\n\n", " \n ", "\t", "a", "I", "don't", "I'M", "DON'T", "they'll've", "'s",
        "'S at the start", "it's 'tis", "'ſ long s", "   leading", "trailing   ", "a  b   c    d",
        "line one\nline two\n\n\nline five\r\n\r\nend", "x\u00a0y\u3000z\u2028w\u0085v\x0bu\x0ct",
        "1234567890", "00000", "3.14e-10", "v1.2.3", "٣٤٥ ١٢٣٤", "²³¹ ¼½¾", "ⅠⅡⅢⅣ",
        "cafe\u0301 vs café", "e\u0301\u0302 \u1100\u1161\u11a8 \u212b", "ǅemal Ǆ ǆ",
        "!!!???... ---> <=> ::= ...", "a.b,c;d:e!f?g", "(((nested)))", "{\"json\": [1, 2, {\"k\": null}]}",
        "🤖🤖🤖", "👩🏽‍💻 and 🏳️‍🌈", "ZWJ alone \u200d here", "\U0001F600" * 5,
        "mixed 日本 and English 文字 123 テスト",
        "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n",
        "<s>Hello</s> <s> spaced </s>", "a<|endoftext|>b", "<|im_start", "<|im_end|><|im_end|>",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
        "text <tool> call <tool>x", "a <mask> b  <mask>", "x [SEP]   y [SEP]", "word wordy sword word_ word.",
        "<0x41> looks like a byte token", "▁already▁has▁metaspace ▁", "x   ½ y   Ⅻ z  ٣",
        "say hello world now, hello there", "hello there", " hello there!",
    ]
    rng = random.Random(7)
    pool = list("aZé日😀 \n\t\r0123456789'’-_.,!?<>|▁") + ["'s", "'T", "  ", "\r\n", "<|im_end|>", "\u0301", "👍🏽"]
    for _ in range(150):
        texts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 30))))
    return texts


def long_text(size=10_000):
    out, i = [], 0
    while sum(len(s) for s in out) < size:
        out.append(_PARAGRAPHS[i % len(_PARAGRAPHS)])
        i += 1
    return "".join(out)[:size]


# ---- Hugging Face tokenizer.json files, trained locally

CHAT_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _train(tok, vocab_size, specials, alphabet):
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, initial_alphabet=alphabet,
                                  show_progress=False)
    tok.train_from_iterator(training_corpus(), trainer)
    return tok


def byte_level(style, vocab_size=900):
    """A byte-level BPE tokenizer: style is gpt2, gpt2_prefix, llama3, qwen2 or smollm."""
    tok = Tokenizer(models.BPE(ignore_merges=style in ("llama3", "qwen2")))
    if style in ("gpt2", "gpt2_prefix"):
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=style == "gpt2_prefix", use_regex=True)
    elif style in ("llama3", "qwen2"):
        pattern = LLAMA3_PATTERN if style == "llama3" else QWEN2_PATTERN
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
        if style == "qwen2":
            tok.normalizer = normalizers.NFC()
    elif style == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    specials = (["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"] if style == "llama3" else CHAT_SPECIALS)
    _train(tok, vocab_size, specials, pre_tokenizers.ByteLevel.alphabet())
    if style == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([  # as Llama 3's tokenizer.json has it
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)])])
        tok.add_special_tokens(["<|start_header_id|>", "<|end_header_id|>"])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False),
                            AddedToken("[SEP]", rstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("<tool>", special=False), AddedToken("word", single_word=True, special=False),
                    AddedToken(" hello world", normalized=False)])  # ' ' is outside the byte-level alphabet
    return tok.to_str()


def legacy_merges(tokenizer_json):
    """The same file with merges written as "a b" strings (the pre-0.20 form)."""
    d = json.loads(tokenizer_json)
    d["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in d["model"]["merges"]]
    return json.dumps(d, ensure_ascii=False)


BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


def sentencepiece_bpe(style="llama2", vocab_size=700):
    """A SentencePiece-style BPE with byte fallback, assembled as Llama 2 / Mistral ship it:
    <unk> <s> </s>, then <0x00>..<0xFF>, then the learned pieces.

    style llama2: normalizer Prepend("▁") + Replace(" ", "▁"), decoder Replace/ByteFallback/Fuse/Strip.
    style metaspace: Metaspace pre-tokenizer (prepend_scheme first), same decoder.
    style metaspace_split: Metaspace (always, split) and a Metaspace + ByteFallback decoder."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    # Leave emoji and CJK out of training so they need byte fallback.
    corpus = [t for t in training_corpus() if not any(ord(c) > 0x2FFF for c in t)]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    d = json.loads(tok.to_str())
    learned = sorted(d["model"]["vocab"].items(), key=lambda kv: kv[1])[3:]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for t in BYTE_TOKENS:
        vocab[t] = len(vocab)
    for t, _ in learned:
        vocab.setdefault(t, len(vocab))
    d["model"]["vocab"] = vocab
    n = len(vocab)
    added = [("<unk>", 0), ("<s>", 1), ("</s>", 2), ("<|im_start|>", n), ("<|im_end|>", n + 1)]
    d["added_tokens"] = [dict(id=i, content=c, single_word=False, lstrip=False, rstrip=False, normalized=False,
                              special=True) for c, i in added]
    d["added_tokens"].append(dict(id=n + 2, content="<tool>", single_word=False, lstrip=False, rstrip=False,
                                  normalized=False, special=False))
    # Matched (and decoded) in normalized form: "▁hello▁there" after Prepend/Replace.
    d["added_tokens"].append(dict(id=n + 3, content="hello there", single_word=False, lstrip=False, rstrip=False,
                                  normalized=True, special=False))
    replace_decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    if style == "llama2":
        d["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
        d["pre_tokenizer"] = None
        d["decoder"] = replace_decoder
    elif style == "metaspace":
        d["normalizer"] = None
        d["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        d["decoder"] = replace_decoder
    else:
        d["normalizer"] = None
        d["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
        d["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                                       "split": True}]}
    d["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return json.dumps(d, ensure_ascii=False)


# ---- tiktoken files

def _bytes_to_unicode():
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_TO_UNICODE = _bytes_to_unicode()
UNICODE_TO_BYTE = {c: b for b, c in BYTE_TO_UNICODE.items()}


def ranks_from_byte_level(tokenizer_json):
    """The base vocabulary of a byte-level tokenizer.json as tiktoken ranks {bytes: rank}."""
    d = json.loads(tokenizer_json)
    special = {t["content"] for t in d["added_tokens"]}
    entries = sorted((i, t) for t, i in d["model"]["vocab"].items() if t not in special)
    return {bytes(UNICODE_TO_BYTE[c] for c in t): rank for rank, (_, t) in enumerate(entries)}


def tiktoken_file(ranks):
    lines = [f"{base64.b64encode(t).decode()} {r}" for t, r in sorted(ranks.items(), key=lambda kv: kv[1])]
    return ("\n".join(lines) + "\n").encode()


LLAMA3_SPECIALS = (["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                    "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
                   + [f"<|reserved_special_token_{i}|>" for i in range(3, 248)])


def hf_json_from_ranks(ranks):
    """A tokenizer.json equivalent to a tiktoken file with the Llama 3 pattern, its merges derived
    from the ranks (as transformers' tiktoken converter does)."""
    def bl(t):
        return "".join(BYTE_TO_UNICODE[b] for b in t)

    merges = []
    for t, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        pairs = sorted((ranks[t[:i]], ranks[t[i:]], t[:i], t[i:]) for i in range(1, len(t))
                       if t[:i] in ranks and t[i:] in ranks)
        merges += [[bl(a), bl(b)] for _, _, a, b in pairs]
    tok = Tokenizer(models.BPE(vocab={bl(t): r for t, r in ranks.items()},
                               merges=[tuple(m) for m in merges], ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(LLAMA3_SPECIALS)
    return tok


def tiktoken_reference_encode(ranks, text, pattern_re):
    """tiktoken's algorithm: split with the pattern, then per piece merge the adjacent pair whose
    concatenation has the lowest rank (leftmost first)."""
    ids = []
    for piece in pattern_re.findall(text):
        b = piece.encode()
        if b in ranks:
            ids.append(ranks[b])
            continue
        parts = [bytes([x]) for x in b]
        while len(parts) > 1:
            best = min(((ranks.get(parts[i] + parts[i + 1], 1 << 30), i) for i in range(len(parts) - 1)))
            if best[0] == 1 << 30:
                break
            i = best[1]
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        ids += [ranks[p] for p in parts]
    return ids


# ---- llama2.c tokenizer.bin

def llama2c_vocab(sp_tokenizer_json):
    """(tokens as bytes, scores) in llama2.c's layout from a SentencePiece-style tokenizer.json:
    <unk>, "\\n<s>\\n", "\\n</s>\\n", <0x00>..<0xFF>, then pieces with ▁ as a space scored by order."""
    d = json.loads(sp_tokenizer_json)
    vocab = sorted(d["model"]["vocab"].items(), key=lambda kv: kv[1])
    tokens, scores = [b"<unk>", b"\n<s>\n", b"\n</s>\n"], [0.0, 0.0, 0.0]
    for t, i in vocab[3:]:
        if t in BYTE_TOKENS:
            tokens.append(t.encode())
            scores.append(0.0)
        else:
            tokens.append(t.replace("▁", " ").encode())
            scores.append(-float(i))
    if b" " not in tokens:
        tokens.append(b" ")
        scores.append(-1e6)
    return tokens, scores


def llama2c_file(tokens, scores):
    out = [struct.pack("<i", max(len(t) for t in tokens))]
    for t, s in zip(tokens, scores):
        out.append(struct.pack("<fi", s, len(t)) + t)
    return b"".join(out)


def llama2c_reference_encode(tokens, scores, text, bos=False):
    """A transcription of llama2.c's encode() (run.c)."""
    scores = [struct.unpack("<f", struct.pack("<f", s))[0] for s in scores]  # as stored: float32
    lookup = {}
    for i, t in enumerate(tokens):
        lookup.setdefault(t, i)
    data = text.encode() if isinstance(text, str) else text
    out = [1] if bos else []
    if data:
        out.append(lookup[b" "])
    i = 0
    while i < len(data):
        j = i + 1
        while j < len(data) and j - i < 4 and (data[j] & 0xC0) == 0x80:
            j += 1
        ch = data[i:j]
        out += [lookup[ch]] if ch in lookup else [b + 3 for b in ch]
        i = j
    while True:
        best, best_id, best_idx = -1e10, -1, -1
        for k in range(len(out) - 1):
            merged = lookup.get(tokens[out[k]] + tokens[out[k + 1]], -1)
            if merged != -1 and scores[merged] > best:
                best, best_id, best_idx = scores[merged], merged, k
        if best_idx == -1:
            break
        out[best_idx:best_idx + 2] = [best_id]
    return out


def llama2c_reference_decode(tokens, ids):
    out = b""
    for k, t in enumerate(ids):
        piece = tokens[t]
        if k > 0 and ids[k - 1] == 1 and piece.startswith(b" "):
            piece = piece[1:]
        if len(piece) == 6 and piece.startswith(b"<0x") and piece.endswith(b">"):
            piece = bytes([int(piece[3:5], 16)])
        out += piece
    return out


def nfc(s):
    return unicodedata.normalize("NFC", s)
