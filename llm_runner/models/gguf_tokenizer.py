"""The tokenizer a GGUF file carries in its metadata, as a Hugging Face tokenizer.json.

A GGUF has no tokenizer file: llama.cpp's converter stores the vocabulary under `tokenizer.ggml.*`
keys and llama.cpp rebuilds the tokenizer from them at load time. This module writes the
tokenizer.json that behaves like llama.cpp's tokenizer for the same keys, so Pocket's C++
tokenizer (pocket::Tokenizer, which reads tokenizer.json) can run it and a .pocket exported from a
GGUF can embed it:

    from pocket.llm.models.gguf_tokenizer import chat_template_from_gguf, tokenizer_json_from_gguf
    data = tokenizer_json_from_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")   # bytes (UTF-8 JSON)
    tok = pocket._native.Tokenizer.from_bytes(data)
    template = chat_template_from_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")  # str or None

Keys read (llama.cpp's names):
  tokenizer.ggml.model        "gpt2" (byte-level BPE) or "llama" (SentencePiece-style BPE)
  tokenizer.ggml.pre          gpt2 only: how text is cut before BPE (see PRE_TOKENIZERS)
  tokenizer.ggml.tokens       the vocabulary, id = position
  tokenizer.ggml.token_type   per token: 1 normal, 2 unknown, 3 control, 4 user-defined,
                              5 unused, 6 byte (<0xNN>)
  tokenizer.ggml.merges       gpt2 (and optional for llama): "left right" strings, best first
  tokenizer.ggml.scores       llama: one float per token; merges are derived from them
  tokenizer.ggml.{bos,eos,unknown,padding}_token_id, add_bos_token, add_eos_token,
  add_space_prefix (llama)
  tokenizer.chat_template     read by chat_template_from_gguf()

How the result follows llama.cpp (and where Hugging Face transformers' own GGUF loader differs):
  - Control (3) and unknown (2) tokens become special added tokens, user-defined (4) tokens plain
    added tokens; all are matched whole in the text before BPE, as llama.cpp's special-token
    partition does (control/unknown ones only when special tokens are parsed).
  - gpt2: the pre-tokenizer comes from tokenizer.ggml.pre. "smollm" splits every digit off first
    (llama.cpp: regex \\p{N}, then the GPT-2 pattern), like SmolLM's own tokenizer.json;
    transformers ignores "smollm" and uses the GPT-2 pattern alone. "llama-bpe"/"llama3" use
    Llama 3's pattern and ignore_merges (a whole pre-token that is a token is kept), "qwen2"
    Qwen2's pattern (llama.cpp applies no NFC normalizer, and neither does this file). "default"
    (and a missing key) use the GPT-2 pattern, as transformers does; llama.cpp's "default" is a
    fallback with extra punctuation and 3-digit splits that it warns degrades quality.
    tokenizer.ggml.add_space_prefix is ignored for gpt2 vocabularies, as llama.cpp ignores it.
  - llama: llama.cpp's SentencePiece rules: spaces become "▁", and with add_space_prefix
    (default true) a "▁" is prepended to every piece of text (the text at the start and after
    each special or user-defined token) -- the Prepend/Replace normalizer form of Llama 2's
    tokenizer.json. transformers' LlamaTokenizer prepends only at the very start of the text.
    Without merges in the file, merges are derived from the scores: every split of a normal
    token into two normal tokens, ranked by the token's score (best first), which reproduces
    SentencePiece's "merge the adjacent pair whose result scores highest"; characters that are no
    token fall back to <0xNN> byte tokens.
  - bos: add_bos_token (default: true for llama and Llama 3 vocabularies, false otherwise)
    becomes a TemplateProcessing post-processor that names bos, which pocket::Tokenizer reads
    as bos_id(). eos is not part of tokenizer.json: take it from the GGUF key.

Errors are GgufError (a ValueError) naming the key or value that is wrong ("unsupported tokenizer.ggml.pre
'deepseek-llm' (supported: ...)", "no tokenizer.ggml.model: the GGUF file carries no tokenizer").
"""

from __future__ import annotations

import json
import os

from pocket.llm.models.gguf_file import GgufError, GgufReader

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                  r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def _split_then_bytes(pattern):
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        dict(_BYTE_LEVEL, use_regex=False)]}


_GPT2 = (_BYTE_LEVEL, False)
_DIGITS_THEN_GPT2 = ({"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True}, _BYTE_LEVEL]}, False)
_LLAMA3 = (_split_then_bytes(LLAMA3_PATTERN), True)
_LLAMA3_KEEP_MERGES = (_split_then_bytes(LLAMA3_PATTERN), False)
_QWEN2 = (_split_then_bytes(QWEN2_PATTERN), False)

# tokenizer.ggml.pre -> (tokenizer.json pre_tokenizer, ignore_merges), grouped as llama.cpp groups
# the names that share one split rule.
PRE_TOKENIZERS = {
    **dict.fromkeys(["default", "gpt2", "gpt-2", "phi-2", "mpt", "olmo"], _GPT2),
    **dict.fromkeys(["smollm", "starcoder", "refact", "codeshell"], _DIGITS_THEN_GPT2),
    **dict.fromkeys(["llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"], _LLAMA3),
    **dict.fromkeys(["dbrx", "smaug-bpe"], _LLAMA3_KEEP_MERGES),
    **dict.fromkeys(["qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"], _QWEN2),
}
_BOS_BY_DEFAULT = {"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"}

_SPACE = "\u2581"  # SentencePiece's "▁"


# ---- reading the GGUF


def _open(reader_or_path):
    if hasattr(reader_or_path, "fields"):
        return reader_or_path
    path = os.fspath(reader_or_path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such GGUF file: {path}")
    return GgufReader(path)


def _get(reader, key, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    try:
        return field.contents()
    except UnicodeDecodeError as e:
        raise GgufError(f"{key}: a string is not valid UTF-8 ({e})") from e


def _token_list(reader, key, n, kind):
    values = _get(reader, key)
    if values is None:
        return None
    if not isinstance(values, list) or len(values) != n:
        got = len(values) if isinstance(values, list) else type(values).__name__
        raise GgufError(f"{key} must list one {kind} per token: {n} tokens, got {got}")
    return values


def _token_id(reader, key, n):
    value = _get(reader, key)
    if value is None:
        return None
    if not isinstance(value, int) or not 0 <= value < n:
        raise GgufError(f"{key} = {value!r} is not a token id (there are {n} tokens)")
    return value


# ---- public functions


def tokenizer_json_from_gguf(reader_or_path) -> bytes:
    """The tokenizer of a GGUF file (a path, a GgufReader or a gguf.GGUFReader) as tokenizer.json bytes."""
    reader = _open(reader_or_path)
    model = _get(reader, "tokenizer.ggml.model")
    if model is None:
        raise GgufError("no tokenizer.ggml.model: the GGUF file carries no tokenizer")
    if model not in ("gpt2", "llama"):
        raise GgufError(f"unsupported tokenizer.ggml.model {model!r} (supported: 'gpt2' byte-level BPE, "
                         f"'llama' SentencePiece BPE)")
    tokens = _get(reader, "tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        raise GgufError("tokenizer.ggml.tokens is missing or empty")
    n = len(tokens)
    types = _token_list(reader, "tokenizer.ggml.token_type", n, "type") or [NORMAL] * n
    ids = {key: _token_id(reader, f"tokenizer.ggml.{key}_token_id", n)
           for key in ("bos", "eos", "unknown", "padding")}
    if model == "gpt2":
        pre = _get(reader, "tokenizer.ggml.pre", "default")
        if pre not in PRE_TOKENIZERS:
            raise GgufError(f"unsupported tokenizer.ggml.pre {pre!r} for a gpt2 tokenizer "
                             f"(supported: {', '.join(sorted(PRE_TOKENIZERS))})")
        add_bos = _get(reader, "tokenizer.ggml.add_bos_token", pre in _BOS_BY_DEFAULT)
        doc = _byte_level_json(tokens, types, _get(reader, "tokenizer.ggml.merges"), pre)
    else:
        add_bos = _get(reader, "tokenizer.ggml.add_bos_token", True)
        if ids["unknown"] is None:
            ids["unknown"] = next((i for i, t in enumerate(types) if t == UNKNOWN), None)
        doc = _sentencepiece_json(reader, tokens, types, ids["unknown"],
                                  bool(_get(reader, "tokenizer.ggml.add_space_prefix", True)))
    doc["added_tokens"] = _added_tokens(tokens, types)
    add_eos = bool(_get(reader, "tokenizer.ggml.add_eos_token", False))
    doc["post_processor"] = _template(tokens, ids["bos"] if add_bos else None, ids["eos"] if add_eos else None)
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def chat_template_from_gguf(reader_or_path) -> str | None:
    """The default chat template (tokenizer.chat_template, Jinja) of a GGUF file, or None."""
    template = _get(_open(reader_or_path), "tokenizer.chat_template")
    return template if isinstance(template, str) and template else None


# ---- tokenizer.json parts


def _vocab(tokens):
    """{token: id}; a token written twice keeps its first id (the later id has no entry)."""
    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    return vocab


def _added_tokens(tokens, types):
    added = []
    for i, (t, kind) in enumerate(zip(tokens, types)):
        if kind in (CONTROL, UNKNOWN, USER_DEFINED) and t:
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": kind != USER_DEFINED})
    return added


def _template(tokens, bos, eos):
    """A TemplateProcessing that adds bos (and eos) around each sequence, or None."""
    if bos is None and eos is None:
        return None

    def around(sequence, type_id):
        def end(x):
            return [{"SpecialToken": {"id": tokens[x], "type_id": type_id}}] if x is not None else []

        return end(bos) + [{"Sequence": {"id": sequence, "type_id": type_id}}] + end(eos)

    return {"type": "TemplateProcessing", "single": around("A", 0), "pair": around("A", 0) + around("B", 1),
            "special_tokens": {tokens[x]: {"id": tokens[x], "ids": [x], "tokens": [tokens[x]]}
                               for x in (bos, eos) if x is not None}}


def _byte_level_json(tokens, types, merges, pre):
    if not isinstance(merges, list) or not merges:
        raise GgufError("tokenizer.ggml.merges is missing or empty (a gpt2 tokenizer needs its merges)")
    vocab = _vocab(tokens)
    pre_tokenizer, ignore_merges = PRE_TOKENIZERS[pre]
    return {
        "version": "1.0", "truncation": None, "padding": None, "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": _file_merges(merges, vocab)},
    }


def _file_merges(merges, vocab):
    """"left right" strings as [left, right] pairs. A merge whose parts or result are not in the
    vocabulary is left out: llama.cpp would make a piece no token spells."""
    pairs = []
    for m in merges:
        at = m.find(" ")
        while at >= 0:  # the space that splits it into tokens (a token may hold spaces too)
            left, right = m[:at], m[at + 1:]
            if left in vocab and right in vocab and left + right in vocab:
                pairs.append([left, right])
                break
            at = m.find(" ", at + 1)
    return pairs


def _sentencepiece_json(reader, tokens, types, unk, add_space_prefix):
    vocab = _vocab(tokens)
    merges = _get(reader, "tokenizer.ggml.merges")
    if isinstance(merges, list) and merges:
        merges = _file_merges(merges, vocab)
    else:
        scores = _token_list(reader, "tokenizer.ggml.scores", len(tokens), "score")
        if scores is None:
            raise GgufError("a llama tokenizer needs tokenizer.ggml.scores (or tokenizer.ggml.merges)")
        merges = _merges_from_scores(tokens, types, scores)
    normalizers = [{"type": "Replace", "pattern": {"String": " "}, "content": _SPACE}]
    if add_space_prefix:
        normalizers.insert(0, {"type": "Prepend", "prepend": _SPACE})
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": _SPACE}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1 if add_space_prefix else 0, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": tokens[unk] if unk is not None else None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": any(k == BYTE for k in types), "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


def _merges_from_scores(tokens, types, scores):
    """SentencePiece BPE merges the adjacent pair whose concatenation is the best-scoring token.
    As BPE merges: every split of a normal token into two normal tokens, ordered by the token's
    score (highest first; ties by token id, then by the ids of the parts)."""
    normal = {}
    for i, (t, kind) in enumerate(zip(tokens, types)):
        if kind == NORMAL:
            normal.setdefault(t, i)
    ranked = []
    for t, i in normal.items():
        for at in range(1, len(t)):
            left, right = normal.get(t[:at]), normal.get(t[at:])
            if left is not None and right is not None:
                ranked.append((-float(scores[i]), i, left, right, t[:at], t[at:]))
    ranked.sort()
    return [[left, right] for *_, left, right in ranked]
