"""The C++ runner through pocket.llm.Runner: greedy generation equals the eager model token
for token, streaming text equals decode(ids), multi-turn chat reuses the cache, samplers
respect their limits, and bad input is a clear error."""

import numpy as np
import pytest
import torch

import pocket
from pocket.llm import Runner, Tokenizer
from pocket.llm.models import LlmConfig, Transformer, export_llm
from program_tools import pack, unpack
from random_models import random_llm

CORPUS = ["The quick brown fox jumps over the lazy dog. " * 3, "def add(a, b):\n    return a + b\n",
          "Pocket runs models on phones. 12345 67890", "naïve café — 東京 🙂"] * 20
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MAX_SEQ = 80


def train_tokenizer(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    tok.save(str(path))
    return tok


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runner")
    hf_tok = train_tokenizer(folder / "tokenizer.json")
    vocab = hf_tok.get_vocab_size()
    eos = hf_tok.token_to_id("<|im_end|>")
    config = LlmConfig(vocab_size=vocab + 6, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden_dim=128, head_dim=16,
                       eos_ids=(eos,))  # a padded vocabulary, as real models have
    model = random_llm(config, MAX_SEQ)
    export_llm(model, chat_template="chatml").save(folder / "model.pocket")
    return folder, hf_tok, model


@pytest.fixture
def runner(setup):
    folder, _, _ = setup
    return Runner(folder / "model.pocket", folder / "tokenizer.json")


@pytest.mark.parametrize("prompt", ["The quick", "def add(a, b):", "x"])
def test_greedy_ids_equal_eager(setup, runner, prompt):
    _, hf_tok, model = setup
    ids = hf_tok.encode(prompt).ids
    want = model.generate_greedy(ids, 32, eos_ids=model.config.eos_ids)
    ends_at_eos = want[-1] in model.config.eos_ids
    got = runner.generate_ids(ids, max_new_tokens=32)
    assert got == (want[:-1] if ends_at_eos else want)  # the runner keeps EOS out of its ids
    assert runner.stats["stop_reason"] == ("eos" if ends_at_eos else "max_new_tokens")


def test_generation_ends_at_eos(setup, tmp_path):
    """A program whose EOS is the token greedy decoding gives at step k stops right there:
    k ids, the text of those k, stop reason "eos"."""
    folder, hf_tok, model = setup
    prompt = hf_tok.encode("The quick").ids
    free = model.generate_greedy(prompt, 12)
    k = next(i for i in range(2, len(free)) if free[i] not in free[:i])
    program, segments = unpack((folder / "model.pocket").read_bytes())
    (eos_entry,) = [kv for kv in program.metadata if kv.key in ("eos_ids", b"eos_ids")]
    eos_entry.value = str(free[k])
    (tmp_path / "eos.pocket").write_bytes(pack(program, segments))
    runner = Runner(tmp_path / "eos.pocket", folder / "tokenizer.json")
    assert model.generate_greedy(prompt, 12, eos_ids=(free[k],)) == free[:k + 1]  # eager agrees
    assert runner.generate_ids(prompt, max_new_tokens=12) == free[:k]
    assert runner.stats["stop_reason"] == "eos" and runner.stats["generated_tokens"] == k
    text = "".join(runner.generate("The quick", max_new_tokens=12))
    assert text == hf_tok.decode(free[:k])
    assert runner.stats["stop_reason"] == "eos" and runner.stats["generated_tokens"] == k


def test_streamed_text_equals_decoded_ids(setup, runner):
    _, hf_tok, model = setup
    pieces = list(runner.generate("The quick", max_new_tokens=24))
    ids = model.generate_greedy(hf_tok.encode("The quick").ids, 24)
    assert "".join(pieces) == hf_tok.decode([i for i in ids if i < hf_tok.get_vocab_size()])
    stats = runner.stats
    assert stats["prompt_tokens"] == len(hf_tok.encode("The quick").ids)
    assert stats["generated_tokens"] == 24 and stats["stop_reason"] == "max_new_tokens"
    assert stats["ttft_ms"] > 0 and stats["decode_tok_s"] > 0 and stats["prefill_tok_s"] > 0


def test_tokenizer_from_python(setup, runner):
    _, hf_tok, _ = setup
    assert runner.tokenizer.encode("Hello café") == hf_tok.encode("Hello café").ids
    ids = hf_tok.encode("naïve café").ids
    assert runner.tokenizer.decode(ids) == hf_tok.decode(ids)
    with pytest.raises(pocket.PocketError, match="runner's tokenizer, which cannot be changed"):
        runner.tokenizer.set_bos_id(0)  # the runner reads it from any thread


def test_multi_turn_chat_reuses_the_cache(setup, runner):
    _, hf_tok, model = setup
    chat = runner.chat(system="Be brief.")
    first = "".join(chat.send("Hi", max_new_tokens=6))
    turn1 = hf_tok.encode("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                          "<|im_start|>assistant\n").ids
    reply1 = model.generate_greedy(turn1, 6)
    assert first == hf_tok.decode(reply1)
    assert runner.position == len(turn1) + 6  # the whole reply is in the cache
    second = list(chat.send("More", max_new_tokens=6))
    turn2 = hf_tok.encode("<|im_end|>\n<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n").ids
    want = model.generate_greedy(turn1 + reply1 + turn2, 6)
    assert "".join(second) == hf_tok.decode(want)



# format: (a template of the family, turn 1 with the system prompt "Be brief.", turn 1 without
# one, a later turn) for the user messages "Hi", then "More".
CHAT_FORMATS = {
    # Phi-3: tags on their own lines, each message closed by <|end|>; no BOS
    "phi3": ("{% for message in messages %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}{% endfor %}",
             "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n",
             "<|user|>\nHi<|end|>\n<|assistant|>\n",
             "<|end|>\n<|user|>\nMore<|end|>\n<|assistant|>\n"),
    # Gemma: BOS; no system role, so the system prompt opens the first user message
    "gemma": ("{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}\\n{{ m['content'] }}"
              "<end_of_turn>\\n{% endfor %}",
              "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n",
              "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
              "<end_of_turn>\n<start_of_turn>user\nMore<end_of_turn>\n<start_of_turn>model\n"),
}


@pytest.mark.parametrize("fmt", sorted(CHAT_FORMATS))
def test_chat_format(setup, tmp_path, fmt):
    """The family's template is recognized (chat_format_of), and the runner formats a first turn
    with and without the system prompt and a later one that closes the previous reply."""
    from pocket.llm.models.recipe import chat_format_of

    template, with_system, without_system, later = CHAT_FORMATS[fmt]
    assert chat_format_of(template) == fmt
    folder, _, model = setup
    export_llm(model, chat_template=fmt, system_prompt="Be brief.").save(tmp_path / "m.pocket")
    runner = Runner(tmp_path / "m.pocket", folder / "tokenizer.json")
    assert runner.chat_template == fmt
    native = runner._native
    assert native.format_chat("Hi") == with_system  # the program's default system prompt
    chat = runner.chat(system="")
    assert native.format_chat("Hi") == without_system
    list(chat.send("Hi", max_new_tokens=3))
    assert native.format_chat("More") == later


def test_same_seed_same_tokens(setup, runner):
    _, hf_tok, _ = setup
    ids = hf_tok.encode("The quick").ids
    a = runner.generate_ids(ids, 20, temperature=1.0, seed=7)
    b = runner.generate_ids(ids, 20, temperature=1.0, seed=7)
    c = runner.generate_ids(ids, 20, temperature=1.0, seed=8)
    assert a == b and a != c


def draws(n=400, **config):
    sampler = pocket._native.Sampler(pocket._native.GenerationConfig(**config))
    logits = np.random.default_rng(0).standard_normal(50).astype(np.float32) * 2
    return logits, {sampler.sample(logits) for _ in range(n)}


def test_top_k_never_picks_excluded_tokens():
    logits, picked = draws(temperature=1.5, top_k=5, seed=1)
    assert picked <= set(np.argsort(-logits)[:5].tolist()) and len(picked) > 1


def test_top_p_never_picks_excluded_tokens():
    logits, picked = draws(temperature=1.0, top_p=0.6, seed=2)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    order = np.argsort(-logits)
    keep = order[:np.searchsorted(np.cumsum(probs[order]), 0.6) + 1]
    assert picked <= set(keep.tolist()) and len(picked) > 1


def test_min_p_never_picks_excluded_tokens():
    logits, picked = draws(temperature=1.0, min_p=0.2, seed=3)
    probs = np.exp(logits - logits.max())
    assert picked <= set(np.nonzero(probs >= 0.2 * probs.max())[0].tolist()) and len(picked) > 1


def test_greedy_and_repetition_penalty():
    logits, picked = draws(temperature=0.0)
    assert picked == {int(np.argmax(logits))}
    s = pocket._native.Sampler(pocket._native.GenerationConfig(repetition_penalty=1e6))
    first = s.sample(logits)
    assert s.sample(logits) != first  # the penalty pushes the repeated token down


def test_bad_sampler_settings_are_errors(runner):
    with pytest.raises(pocket.PocketError, match="temperature must be >= 0"):
        runner.generate_ids([1, 2], 4, temperature=-1.0)
    with pytest.raises(pocket.PocketError, match=r"top_p must be in \(0, 1\]"):
        runner.generate_ids([1, 2], 4, top_p=0.0)


def test_prompt_longer_than_context_is_an_error(runner):
    with pytest.raises(pocket.PocketError, match="context overflow: 81 tokens at position 0 do not fit .* 80"):
        runner.generate_ids([5] * 81, 4)


def test_token_outside_vocabulary_is_an_error(runner):
    with pytest.raises(pocket.PocketError, match="outside the vocabulary"):
        runner.generate_ids([10_000], 4)


def test_non_llm_program_is_an_error(setup, tmp_path):
    folder, _, _ = setup
    pocket.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),)).save(tmp_path / "linear.pocket")
    with pytest.raises(pocket.PocketError, match="is not an LLM program"):
        Runner(tmp_path / "linear.pocket", folder / "tokenizer.json")


def test_tokenizer_bigger_than_model_vocabulary_is_an_error(setup, tmp_path):
    folder, _, _ = setup
    c = LlmConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, n_kv_heads=2, hidden_dim=64, head_dim=16)
    export_llm(Transformer(c, 16).eval()).save(tmp_path / "small.pocket")
    with pytest.raises(pocket.PocketError, match=r"tokenizer has \d+ tokens but the model's vocabulary has 100"):
        Runner(tmp_path / "small.pocket", folder / "tokenizer.json")


@pytest.mark.parametrize("key,value", [("vocab_size", "99999999999"), ("max_seq_len", "-16")])
def test_metadata_out_of_range_is_an_error(setup, tmp_path, key, value):
    """Found by fuzz/embedded_tokenizer.cpp: a huge vocab_size sized a 400 GB logits buffer."""
    folder, _, _ = setup
    program, segments = unpack((folder / "model.pocket").read_bytes())
    for kv in program.metadata:
        if kv.key in (key, key.encode()):
            kv.value = value
    (tmp_path / "bad.pocket").write_bytes(pack(program, segments))
    with pytest.raises(pocket.PocketError, match="metadata vocab_size .* or max_seq_len .* is out of range"):
        Runner(tmp_path / "bad.pocket", folder / "tokenizer.json")


def test_wrong_tokenizer_file_is_an_error(setup):
    folder, _, _ = setup
    with pytest.raises(pocket.PocketError):
        Runner(folder / "model.pocket", folder / "model.pocket")


def test_missing_tokenizer_without_embedded_one_is_an_error(setup):
    folder, _, _ = setup
    with pytest.raises(pocket.PocketError, match="has no embedded tokenizer"):
        Runner(folder / "model.pocket")


@pytest.mark.parametrize("family", ["llama2", "metaspace", "metaspace_split", "llama2c"])
def test_streamed_text_equals_decoded_ids_for_every_tokenizer_family(tmp_path, family):
    """Streaming decodes a window of tokens per step, not the whole answer: long sampled answers
    (byte tokens that split characters, spaces a SentencePiece decoder strips at the start or
    after BOS) stream exactly what decoding all their ids gives."""
    from tokenizer_fixtures import llama2c_file, llama2c_vocab, sentencepiece_bpe

    tokenizer_json = sentencepiece_bpe("llama2" if family == "llama2c" else family)
    path = tmp_path / "tokenizer.json"
    if family == "llama2c":
        path = tmp_path / "tokenizer.bin"
        path.write_bytes(llama2c_file(*llama2c_vocab(tokenizer_json)))
    else:
        path.write_text(tokenizer_json, encoding="utf-8")
    vocab = len(Tokenizer.from_file(str(path)))
    config = LlmConfig(vocab_size=vocab, dim=32, n_layers=1, n_heads=2, n_kv_heads=2, hidden_dim=64, head_dim=16)
    export_llm(random_llm(config, MAX_SEQ)).save(tmp_path / "model.pocket")
    runner = Runner(tmp_path / "model.pocket", path)
    for seed in range(3):
        text = "".join(runner.generate("Hello there", max_new_tokens=60, temperature=1.5, seed=seed))
        generated = runner.stats["generated_tokens"]
        ids = runner.generate_ids(runner.tokenizer.encode("Hello there", add_bos=True), 60, temperature=1.5, seed=seed)
        assert len(ids) == generated > 0
        assert text == runner.tokenizer.decode(ids), (seed, ids)
