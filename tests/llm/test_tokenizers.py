"""The C++ tokenizers (pocket._native.Tokenizer) against oracles: the Hugging Face `tokenizers`
library on tokenizer.json files trained here, tiktoken's algorithm (and tiktoken itself when
installed) on a tiktoken file, and a transcription of llama2.c's encode() on a tokenizer.bin."""

import json
import pathlib
import random
import time

import pytest
import regex
from tokenizer_fixtures import (GPT2_PATTERN, LLAMA3_PATTERN, LLAMA3_SPECIALS, QWEN2_PATTERN, byte_level,
                                comparison_texts, hf_json_from_ranks, legacy_merges, llama2c_file,
                                llama2c_reference_decode, llama2c_reference_encode, llama2c_vocab, long_text, nfc,
                                ranks_from_byte_level, sentencepiece_bpe, tiktoken_file, tiktoken_reference_encode)
from tokenizers import Tokenizer as HfTokenizer

from pocket._errors import PocketError
from pocket._native import Tokenizer, _tokenizer_nfc, _tokenizer_regex_split

TEXTS = comparison_texts()
BYTE_LEVEL_STYLES = ["gpt2", "gpt2_prefix", "llama3", "qwen2", "smollm"]
SP_STYLES = ["llama2", "metaspace", "metaspace_split"]


@pytest.fixture(scope="module")
def trained():
    """{style: tokenizer.json text}, trained once for the module."""
    files = {s: byte_level(s) for s in BYTE_LEVEL_STYLES}
    files.update({s: sentencepiece_bpe(s) for s in SP_STYLES})
    return files


def pair(trained, style):
    text = trained[style]
    return HfTokenizer.from_str(text), Tokenizer.from_bytes(text.encode())


def check_against_oracle(hf, ours, texts):
    for t in texts:
        want = hf.encode(t, add_special_tokens=False).ids
        got = ours.encode(t)
        assert got == want, f"encode {t!r}"
        assert ours.decode(got) == hf.decode(want, skip_special_tokens=False), f"decode {t!r}"
        assert ours.decode(got, skip_special=True) == hf.decode(want, skip_special_tokens=True), f"decode {t!r}"


# ---- Hugging Face tokenizer.json


@pytest.mark.parametrize("style", BYTE_LEVEL_STYLES + SP_STYLES)
def test_encode_decode_match_hf(trained, style):
    hf, ours = pair(trained, style)
    assert ours.vocab_size == hf.get_vocab_size(with_added_tokens=True)
    check_against_oracle(hf, ours, TEXTS)


@pytest.mark.parametrize("style", ["gpt2", "llama3", "llama2"])
def test_special_tokens_as_text(trained, style):
    hf, ours = pair(trained, style)
    hf.encode_special_tokens = True
    for t in TEXTS:
        assert ours.encode(t, parse_special=False) == hf.encode(t, add_special_tokens=False).ids, t


@pytest.mark.parametrize("style", ["gpt2", "llama2"])
def test_legacy_string_merges(trained, style):
    text = legacy_merges(trained[style])
    assert isinstance(json.loads(text)["model"]["merges"][0], str)
    hf, ours = HfTokenizer.from_str(text), Tokenizer.from_bytes(text.encode())
    check_against_oracle(hf, ours, TEXTS[:60])


def test_bos_eos_and_lookups(trained):
    hf, ours = pair(trained, "llama3")
    bos = hf.token_to_id("<|begin_of_text|>")
    assert ours.bos_id == bos
    assert ours.eos_ids == [hf.token_to_id("<|end_of_text|>"), hf.token_to_id("<|eot_id|>")]
    assert ours.eos_id == ours.eos_ids[0] and ours.is_eos(hf.token_to_id("<|eot_id|>"))
    for t in TEXTS[:40]:
        assert ours.encode(t, add_bos=True) == hf.encode(t).ids  # the template adds <|begin_of_text|>
    assert ours.token_id("<|eot_id|>") == hf.token_to_id("<|eot_id|>")
    assert ours.token_id("Ġthe") == hf.token_to_id("Ġthe") is not None
    assert ours.token_id("no such token") is None
    assert ours.token_text(bos) == "<|begin_of_text|>" and ours.is_special(bos)
    assert not ours.is_special(ours.token_id("Ġthe"))

    hf, ours = pair(trained, "llama2")
    assert (ours.bos_id, ours.eos_ids) == (1, [2, hf.token_to_id("<|im_end|>")])
    assert ours.encode("Hello world", add_bos=True) == hf.encode("Hello world").ids

    hf, ours = pair(trained, "smollm")
    assert ours.bos_id is None
    assert ours.eos_ids == [hf.token_to_id("<|endoftext|>"), hf.token_to_id("<|im_end|>")]
    assert ours.encode("x", add_bos=True) == ours.encode("x")  # no bos: nothing to add
    ours.set_bos_id(1)
    ours.set_eos_ids([2])
    assert ours.encode("x", add_bos=True)[0] == 1 and ours.eos_ids == [2]
    with pytest.raises(PocketError, match="outside the vocabulary"):
        ours.set_eos_ids([10**6])


@pytest.mark.parametrize("style", ["gpt2", "llama3", "smollm"])
def test_byte_level_pieces_and_invalid_utf8(trained, style):
    _, ours = pair(trained, style)
    for t in TEXTS:
        ids = ours.encode(t, parse_special=False)
        assert b"".join(ours.piece(i) for i in ids) == t.encode()
    for raw in [b"\xff\xfe bad", b"caf\xc3", b"\xe2\x82", b"ok \xed\xa0\x80 surrogate", bytes(range(256))]:
        ids = ours.encode(raw)
        assert ours.decode_bytes(ids) == raw
        assert ours.decode(ids) == raw.decode("utf-8", "replace")


@pytest.mark.parametrize("style", SP_STYLES)
def test_sentencepiece_byte_fallback_and_pieces(trained, style):
    hf, ours = pair(trained, style)
    ids = ours.encode("hi 😀")
    assert any(ours.token_text(i) == "<0xF0>" for i in ids)  # not in the training corpus
    assert ours.piece(ours.token_id("<0x0A>")) == b"\n"
    assert ours.piece(ours.token_id("▁the")) == b" the"
    for raw in [b"\xff bad", b"caf\xc3"]:  # invalid UTF-8 falls back to bytes, never fails
        assert ours.decode_bytes(ours.encode(raw)).endswith(raw)


def test_decode_streaming_by_pieces(trained):
    hf, ours = pair(trained, "llama2")
    ids = ours.encode("Streaming 日本 text, piece by piece.")
    joined = b"".join(ours.piece(i) for i in ids)
    assert joined.decode() == " " + hf.decode(ids)  # decode() drops the prepended space


def test_speed_10kb(trained):
    text = long_text(10_000)
    for style in ["llama3", "llama2", "gpt2"]:
        _, ours = pair(trained, style)
        best = min(_timed(lambda: ours.encode(text)) for _ in range(3))
        assert best < 0.05, f"{style}: {best * 1e3:.1f} ms for 10 KB"
    _, ours = pair(trained, "llama2")
    one_chunk = "x" * 10_000 + "ab" * 5_000  # no spaces: one 20k-symbol BPE chunk
    assert min(_timed(lambda: ours.encode(one_chunk)) for _ in range(3)) < 0.05


def _timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


# ---- tiktoken


@pytest.fixture(scope="module")
def tiktoken_setup(trained):
    ranks = ranks_from_byte_level(trained["llama3"])
    data = tiktoken_file(ranks)
    return ranks, data, Tokenizer.from_bytes(data)


def test_tiktoken_matches_reference(tiktoken_setup):
    ranks, _, ours = tiktoken_setup
    pattern = regex.compile(LLAMA3_PATTERN)
    n = len(ranks)
    assert ours.format == "tiktoken" and ours.vocab_size == n + 256
    for t in TEXTS:
        assert ours.encode(t, parse_special=False) == tiktoken_reference_encode(ranks, t, pattern), t
        assert ours.decode(ours.encode(t, parse_special=False)) == t


def test_tiktoken_matches_hf_conversion(tiktoken_setup):
    ranks, _, ours = tiktoken_setup
    hf = hf_json_from_ranks(ranks)
    for t in TEXTS:
        assert ours.encode(t) == hf.encode(t, add_special_tokens=False).ids, t


def test_tiktoken_specials(tiktoken_setup):
    ranks, _, ours = tiktoken_setup
    n = len(ranks)
    assert [ours.token_id(s) for s in LLAMA3_SPECIALS] == list(range(n, n + 256))
    assert ours.bos_id == n and ours.eos_ids == [n + 1, n + 9, n + 8]
    text = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
    ids = ours.encode(text)
    assert ids[:2] == [n, n + 6] and ids[-1] == n + 9
    assert ours.decode(ids) == text and ours.decode(ids, skip_special=True) == "user\n\nhi"
    assert ours.encode("x", add_bos=True)[0] == n
    assert ours.token_text(ranks[b" the"]) == "Ġthe"  # spelled as in Llama 3's tokenizer.json


def test_tiktoken_matches_tiktoken_library(tiktoken_setup):
    tiktoken = pytest.importorskip("tiktoken")
    ranks, _, ours = tiktoken_setup
    n = len(ranks)
    enc = tiktoken.Encoding("test", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks,
                            special_tokens={s: n + i for i, s in enumerate(LLAMA3_SPECIALS)})
    for t in TEXTS:
        assert ours.encode(t) == enc.encode(t, allowed_special="all"), t


# ---- llama2.c


@pytest.fixture(scope="module")
def llama2c_setup(trained):
    tokens, scores = llama2c_vocab(trained["llama2"])
    return tokens, scores, Tokenizer.from_bytes(llama2c_file(tokens, scores))


def test_llama2c_matches_reference(llama2c_setup):
    tokens, scores, ours = llama2c_setup
    assert ours.format == "llama2.c tokenizer.bin" and ours.vocab_size == len(tokens)
    assert (ours.bos_id, ours.eos_ids, ours.token_id("<s>"), ours.token_id("</s>")) == (1, [2], 1, 2)
    for t in TEXTS:
        want = llama2c_reference_encode(tokens, scores, t, bos=True)
        got = ours.encode(t, add_bos=True)
        assert got == want, t
        text = llama2c_reference_decode(tokens, want)
        assert ours.decode_bytes(got) == text
        assert ours.decode_bytes(got, skip_special=True) == text.removeprefix(b"\n<s>\n")


def test_llama2c_invalid_utf8(llama2c_setup):
    tokens, scores, ours = llama2c_setup
    for raw in [b"\xff\xfe", b"a\x80\x80\x80\x80\x80b", b"caf\xc3"]:
        assert ours.encode(raw) == llama2c_reference_encode(tokens, scores, raw)


# ---- the regex engine and NFC under the tokenizers

REGEX_TEXTS = TEXTS + ["a" * 3000 + " " * 3000 + "\n" * 3000 + "1" * 3000]


O200K_PATTERN = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
                 r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"""
                 r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN, O200K_PATTERN])
def test_split_patterns_match_hf(pattern):
    from tokenizers import Regex, pre_tokenizers
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    for t in REGEX_TEXTS:
        want = [p for p, _ in split.pre_tokenize_str(t)]
        got = [p.decode() for p in _tokenizer_regex_split(pattern, t)]
        assert got == want, t


def test_regex_constructs():
    cases = [
        (r"a{2,3}", "aaaaaaa", ["aaa", "aaa"]), (r"(?:ab)?c", "abcc", ["abc", "c"]), (r"[^a-c]+", "abxyzc", ["xyz"]),
        (r"\d+|\w+", "٣٤ x_1", ["٣٤", "x_1"]), (r"x(?=y)", "xyxz", ["x"]), (r"(?i)hello", "HeLLo", ["HeLLo"]),
        (r"a+?", "aaa", ["a", "a", "a"]), (r"\p{Lu}\p{Ll}+", "Hello World", ["Hello", "World"]),
        (r"^a|b$", "aab", ["a", "b"]), (r"[\x41-\x43\u00e9]+", "ABCéD", ["ABCé"]), (r"\P{L}+", "ab12!c", ["12!"]),
        (r"(?:x|y){1,2}z", "xyzyz", ["xyz", "yz"]), (r"\d{1,3}+", "12345", ["123", "45"]),
    ]
    for pattern, text, want in cases:
        assert [p.decode() for p in _tokenizer_regex_split(pattern, text)] == want, pattern
    for bad in [r"(?<=a)b", r"(ab)+", r"[a-", r"\p{Nope}", r"a{3,1}", r"(a", r"\q"]:
        with pytest.raises(PocketError):
            _tokenizer_regex_split(bad, "x")


def test_nfc_matches_unicodedata():
    rng = random.Random(3)
    pool = ["e", "\u0301", "\u0323", "\u0302", "A", "\u030a", "\u1100", "\u1161", "\u11a8", "\uac00", "\u212b",
            "\u0344", "\u0f73", "\u1e0b", "\u0958", "\U0001d15e", "\u05b8", "ﬀ", " ", "o", "\u0308", "\u0304"]
    samples = ["cafe\u0301", "\u1100\u1161\u11a8", "a\u0323\u0302", "\u212b", "\u0958", "ṩ", "q\u0307\u0323"]
    samples += ["".join(rng.choice(pool) for _ in range(rng.randint(1, 12))) for _ in range(2000)]
    for s in samples:
        assert _tokenizer_nfc(s).decode() == nfc(s), ascii(s)
    assert _tokenizer_nfc(b"\xff\xcc\x81") == b"\xff\xcc\x81"  # invalid bytes pass through


# ---- bad input


def _load_error(data):
    with pytest.raises(PocketError) as info:
        Tokenizer.from_bytes(data)
    return info.value


def test_wrong_kind_of_file(trained):
    assert "not a tokenizer file" in _load_error(random.Random(0).randbytes(4000)).message
    assert "empty" in _load_error(b"").message
    golden = pathlib.Path(__file__).parent.parent / "golden" / "mlp.pocket"
    pocket_file = golden.read_bytes() if golden.exists() else b"POCKETPG" + bytes(100)
    assert ".pocket program" in _load_error(pocket_file).message
    assert "GGUF" in _load_error(b"GGUF\x03\x00\x00\x00" + bytes(100)).message
    assert "not a tokenizer file" in _load_error(b"hello world, just some text\n").message
    from tokenizers import models
    wordpiece = HfTokenizer(models.WordPiece(vocab={"[UNK]": 0, "a": 1}, unk_token="[UNK]")).to_str()
    assert _load_error(wordpiece.encode()).message == "tokenizer.json: expected a BPE model, found WordPiece"
    unigram = HfTokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0)], 0)).to_str()
    assert "found Unigram" in _load_error(unigram.encode()).message


def test_corrupt_json(trained):
    text = trained["gpt2"].encode()
    err = _load_error(text[:5000])
    assert err.message == "tokenizer.json: truncated JSON at byte 5000" and err.status == "INVALID_PROGRAM"
    bad = text[:100] + b"#" + text[101:]
    assert "invalid JSON at byte 100" in _load_error(bad).message
    assert "nested deeper" in _load_error(b"{\"a\": " + b"[" * 1000 + b"]" * 1000 + b"}").message
    assert "lone" in _load_error(b'{"model": "\\ud800"}').message


def test_missing_or_bad_fields(trained):
    base = json.loads(trained["gpt2"])

    def error_for(edit):
        d = json.loads(json.dumps(base))
        edit(d)
        return _load_error(json.dumps(d).encode()).message

    assert "no \"model\" object" in error_for(lambda d: d.pop("model"))
    assert "model.vocab must be an object" in error_for(lambda d: d["model"].pop("vocab"))
    assert "model.merges[0]" in error_for(lambda d: d["model"]["merges"].insert(0, ["nope", "zzz"]))
    assert "is not a token id" in error_for(lambda d: d["model"]["vocab"].update({"x": -3}))
    assert "added_tokens[0]" in error_for(lambda d: d["added_tokens"][0].pop("id"))
    assert "pre_tokenizer 'Whitespace' is not supported" in error_for(
        lambda d: d.update(pre_tokenizer={"type": "Whitespace"}))
    assert "normalizer 'Lowercase' is not supported" in error_for(lambda d: d.update(normalizer={"type": "Lowercase"}))
    msg = error_for(lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(?<=x)y"},
                                                      "behavior": "Isolated", "invert": False}))
    assert "(?<=x)y" in msg and "not supported" in msg


def test_bad_tiktoken_and_llama2c(tiktoken_setup, llama2c_setup):
    _, data, _ = tiktoken_setup
    lines = data.split(b"\n")
    assert "line 3" in _load_error(b"\n".join(lines[:2] + [b"!!notbase64 5"] + lines[3:])).message
    assert "rank 7 appears twice" in _load_error(data + b"QUJDREVGRw== 7\n").message
    assert "byte 0x41 has no token" in _load_error(b"\n".join(l for l in lines if not l.startswith(b"QQ== "))).message
    tokens, scores, _ = llama2c_setup
    blob = llama2c_file(tokens, scores)
    assert "llama2.c tokenizer: truncated file" in _load_error(blob[:-3]).message


def test_api_errors(trained, tmp_path):
    with pytest.raises(PocketError) as info:
        Tokenizer.from_file(str(tmp_path / "missing.json"))
    assert info.value.status == "NOT_FOUND"
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"{\"model\": {\"type\": \"WordPiece\"}}")
    with pytest.raises(PocketError) as info:
        Tokenizer.from_file(str(path))
    assert info.value.message == f"tokenizer.json: expected a BPE model, found WordPiece (file '{path}')"
    path.write_text(trained["gpt2"])
    ours = Tokenizer.from_file(str(path))
    with pytest.raises(PocketError) as info:
        ours.decode([0, ours.vocab_size])
    assert info.value.status == "OUT_OF_RANGE"
    with pytest.raises(PocketError):
        ours.piece(-1)
