"""Writes the fuzz seed corpora (fuzz/corpus/<target>/) and dictionaries (fuzz/dict/<target>.dict).

    python fuzz/make_corpus.py

Seeds are small valid inputs of each target, built from the golden programs (tests/golden) and
tokenizers trained here with the fixtures of tests/llm (no downloads; vocabularies of ~300 so
the corpora stay a few hundred KB). Tokenizer seeds are [u16 text length][text][file], the
layout fuzz/tokenizer_fuzz.h reads. Dictionaries list the tokens of each format (JSON keys and
type names, FlatBuffers op names and metadata keys, special tokens) for libFuzzer's -dict.
"""

import hashlib
import json
import pathlib
import re
import shutil
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

import tokenizer_fixtures as tf  # noqa: E402

TEXTS = ["Hello world! It's 2024.", "Café naïve 日本語 😀 👍🏽\n\ttabs  spaces",
         "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "<s>[INST] x [/INST] </s>",
         "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>", "a<0x41>▁b <mask> [SEP] word"]


def tokenizer_seed(text: str, file: bytes) -> bytes:
    t = text.encode()
    return struct.pack("<H", len(t)) + t + file


def tokenizer_files() -> dict[str, list[bytes]]:
    json_files = [tf.byte_level(style, vocab_size=300) for style in ("gpt2_prefix", "llama3", "qwen2", "smollm")]
    sp = {style: tf.sentencepiece_bpe(style, vocab_size=300) for style in ("llama2", "metaspace", "metaspace_split")}
    json_files += list(sp.values()) + [tf.legacy_merges(json_files[0])]
    json_files = [s.encode() for s in json_files] + [(ROOT / "tests/golden/tiny_llm.tokenizer.json").read_bytes()]
    # A SentencePiece .model starts like this protobuf; the loader refuses it by name.
    json_files.append(b"\x0a\x0b\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02" + b"\x0a\x07\x0a\x03<s>\x18\x03")
    tiktoken = [tf.tiktoken_file(tf.ranks_from_byte_level(tf.byte_level("gpt2", vocab_size=300)))]
    llama2c = [tf.llama2c_file(*tf.llama2c_vocab(sp["llama2"]))]
    return {"tokenizer_json": json_files, "tokenizer_tiktoken": tiktoken, "tokenizer_llama2c": llama2c}


def micro_llm() -> bytes:
    """An LLM program small enough to be a seed: dim 16, 1 layer, the golden ChatML tokenizer embedded."""
    from pocket.llm.models import LlmConfig, export_llm
    from random_models import random_llm

    tok = (ROOT / "tests/golden/tiny_llm.tokenizer.json").read_bytes()
    vocab = len(json.loads(tok)["model"]["vocab"])
    config = LlmConfig(vocab_size=vocab, dim=16, n_layers=1, n_heads=2, n_kv_heads=1, hidden_dim=32, head_dim=8,
                       eos_ids=(2,))
    return export_llm(random_llm(config, 16), chat_template="chatml", tokenizer=tok,
                      system_prompt="You are a tiny fuzzing model.").data


def chat_seeds() -> list[bytes]:
    out = []
    for i, name in enumerate(("chatml", "llama3", "llama2", "none")):
        for first in (1, 0):
            out.append(bytes([first]) + f"{name}\0You are helpful.\0{TEXTS[i % len(TEXTS)]}".encode())
    return out


def generation_seeds() -> list[bytes]:
    # Byte strings FuzzedDataProvider reads as parameters and a call; any bytes are valid.
    return [bytes(range(i, i + 64)) + TEXTS[i % len(TEXTS)].encode() for i in range(0, 200, 40)]


# ---- dictionaries

def quoted(tokens) -> str:
    def esc(t: bytes) -> str:
        return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\x{b:02x}" for b in t)
    return "".join(f'"{esc(t if isinstance(t, bytes) else t.encode())}"\n' for t in sorted(set(tokens), key=str))


def json_dict() -> str:
    # Every string literal the tokenizer.json reader compares against, plus JSON syntax.
    words = set()
    for src in (ROOT / "llm_runner/tokenizer").glob("hf_*.cpp"):
        words.update(w for w in re.findall(r'"([A-Za-z_]{2,40})"', src.read_text()))
    tokens = [f'"{w}"' for w in words] + ["{", "}", "[", "]", ":", ",", "true", "false", "null", "\\u", "\\ud83d",
                                          '"\\n"', "1e400", "-1", "4294967296", "▁", "Ġ"]
    return quoted(tokens)


def pocket_dict() -> str:
    ops = re.findall(r'"((?:aten|pocket)::[A-Za-z0-9_.]+)"', (ROOT / "runtime_core/kernels/registry_table.inc").read_text())
    keys = ["pocket_llm", "max_seq_len", "vocab_size", "eos_ids", "bos_id", "chat_template", "chatml", "llama3",
            "llama2", "default_system_prompt", "prefill", "decode", "forward", "output_spec"]
    ints = [b"POCKETPG", b"\x01\x00\x00\x00", b"\x20\x00\x00\x00", b"\x40\x00\x00\x00", b"\xff\xff\xff\xff",
            b"\x00\x00\x00\x80", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x00\x00\x00\x00\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\xff", b"\x00\x00\x00\x00\x00\x01\x00\x00"]
    return quoted([o.encode() for o in ops] + [k.encode() for k in keys] + ints)


def tiktoken_dict() -> str:
    return quoted(["==", "=", " 0\n", " 255\n", " 4294967296\n", "\n\n", "ISE=", "IQ==", "<|begin_of_text|>"])


def chat_dict() -> str:
    return quoted(["chatml", "llama3", "llama2", "phi3", "gemma", "none", "<|user|>", "<|end|>", "<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>",
                   "[INST]", "<<SYS>>", "<|eot_id|>", "<|start_header_id|>", "\x00", b"\xf0\x9f\x98", b"\xc3"])


def write(folder: pathlib.Path, files: list[bytes]):
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for data in files:
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    corpus = HERE / "corpus"
    program_seeds = [(ROOT / f"tests/golden/{n}.pocket").read_bytes() for n in ("mlp", "cnn")]
    llm = micro_llm()
    write(corpus / "program", program_seeds + [llm])
    write(corpus / "embedded_tokenizer", [llm])
    for target, files in tokenizer_files().items():
        write(corpus / target, [tokenizer_seed(TEXTS[i % len(TEXTS)], f) for i, f in enumerate(files)])
    write(corpus / "chat_template", chat_seeds())
    write(corpus / "generation_config", generation_seeds())

    dicts = HERE / "dict"
    dicts.mkdir(exist_ok=True)
    for name, text in {"program": pocket_dict(), "embedded_tokenizer": pocket_dict() + json_dict(),
                       "tokenizer_json": json_dict(), "tokenizer_tiktoken": tiktoken_dict(),
                       "chat_template": chat_dict()}.items():
        (dicts / f"{name}.dict").write_text(f"# libFuzzer dictionary, written by fuzz/make_corpus.py\n{text}")
    total = sum(f.stat().st_size for f in corpus.rglob("*") if f.is_file())
    print(f"corpora: {total // 1024} KiB in {corpus}")


if __name__ == "__main__":
    main()
