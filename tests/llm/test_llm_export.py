"""Llama-family model code and export: against transformers (logits) and against the same
eager model (greedy generation, token for token, through the C++ runtime)."""

import json

import pytest
import torch

import pocket
from pocket.llm.models import export_llm, load_checkpoint
from tiny_models import FAMILIES, make_checkpoint

MAX_SEQ = 96


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family_model(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    hf = make_checkpoint(request.param, folder, tie=request.param in ("qwen3", "gemma"))
    model = load_checkpoint(folder, max_seq_len=MAX_SEQ)
    program = export_llm(model)
    return request.param, hf, model, pocket.Module.from_bytes(program.data)


def test_logits_match_transformers(family_model):
    _, hf, model, _ = family_model
    tokens = torch.randint(0, 128, (1, 11))
    with torch.no_grad():
        want = hf(tokens).logits[:, -1]
        got = model(tokens, torch.tensor([0]))
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def runtime_greedy(module, prompt, n):
    module.reset_buffers()
    logits = module.run("prefill" if len(prompt) > 1 else "decode", torch.tensor([prompt]), torch.tensor([0]))
    out, pos = [], len(prompt)
    for _ in range(n):
        token = int(logits.argmax())
        out.append(token)
        logits = module.run("decode", torch.tensor([[token]]), torch.tensor([pos]))
        pos += 1
    return out


@pytest.mark.parametrize("prompt_len", [1, 5, 23])
def test_greedy_generation_matches_eager(family_model, prompt_len):
    _, _, model, module = family_model
    g = torch.Generator().manual_seed(prompt_len)
    prompt = torch.randint(0, 128, (prompt_len,), generator=g).tolist()
    want = model.generate_greedy(prompt, 32)
    got = runtime_greedy(module, prompt, 32)
    assert got == want
    assert len(set(want)) >= 3, "degenerate model output makes this test weak"


def test_prefill_and_decode_share_the_cache(family_model):
    """Prefilling a prompt in two chunks gives the logits of prefilling it at once."""
    _, _, _, module = family_model
    prompt = torch.randint(0, 128, (1, 12))
    module.reset_buffers()
    whole = module.run("prefill", prompt, torch.tensor([0]))
    module.reset_buffers()
    module.run("prefill", prompt[:, :7], torch.tensor([0]))
    split = module.run("prefill", prompt[:, 7:], torch.tensor([7]))
    torch.testing.assert_close(split, whole, atol=1e-5, rtol=1e-5)


def test_metadata(family_model):
    name, _, _, module = family_model
    md = module.metadata
    assert md["pocket_llm"] == "1" and md["max_seq_len"] == str(MAX_SEQ) and md["vocab_size"] == "128"
    assert md["eos_ids"] == "2" and md["bos_id"] == "1"
    assert md["model_family"] == {"llama": "llama", "llama3": "llama", "mistral": "llama", "phi3": "llama"}.get(name, name)


def test_position_past_the_context_is_an_error(family_model):
    _, _, _, module = family_model
    with pytest.raises(pocket.PocketError, match=r"index 96 is out of bounds|start_pos 96 outside"):
        module.run("decode", torch.tensor([[3]]), torch.tensor([MAX_SEQ]))


def test_unsupported_architecture_is_named(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 10}')
    with pytest.raises(ValueError, match="unsupported model_type 'gpt2'"):
        load_checkpoint(tmp_path, 16)


def test_context_longer_than_the_sliding_window_is_refused(tmp_path):
    """Mistral v0.1 and Phi-3 attend within a sliding window; Pocket's attention sees the whole
    context, which is the same model only up to the window."""
    make_checkpoint("phi3", tmp_path)  # sliding_window 200
    assert load_checkpoint(tmp_path, 200).config.sliding_window == 200
    with pytest.raises(ValueError, match="max_seq_len 201 is longer than the model's sliding window"):
        load_checkpoint(tmp_path, 201)
    qwen = tmp_path / "qwen2"  # Qwen2.5's config.json files name a window and turn it off
    make_checkpoint("qwen2", qwen)
    config = json.loads((qwen / "config.json").read_text())
    (qwen / "config.json").write_text(json.dumps(config | {"sliding_window": 32, "use_sliding_window": False}))
    assert load_checkpoint(qwen, 64).config.sliding_window is None


def test_partial_rotary_factor_is_named(tmp_path):
    (tmp_path / "config.json").write_text(
        '{"model_type": "phi3", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, '
        '"num_attention_heads": 2, "intermediate_size": 16, "partial_rotary_factor": 0.75}')
    with pytest.raises(ValueError, match="unsupported partial_rotary_factor 0.75"):
        load_checkpoint(tmp_path, 16)


def test_generation_config_adds_end_of_turn_ids(tmp_path):
    """A chat model's end-of-turn token named only in generation_config.json (Phi-3's <|end|>,
    Llama 3.0 Instruct's <|eot_id|>) also ends generation."""
    from pocket.llm.models.recipe import export_checkpoint

    make_checkpoint("phi3", tmp_path)  # config.json: eos 2
    (tmp_path / "generation_config.json").write_text('{"bos_token_id": 1, "eos_token_id": [2, 7, 2, 9]}')
    module = pocket.Module.from_bytes(export_checkpoint(str(tmp_path), max_seq_len=32).data)
    assert module.metadata["eos_ids"] == "2,7,9"



def test_chat_format_end_of_turn_token_stops_generation(tmp_path):
    """A checkpoint whose configs name only <eos> (Gemma 1's) still stops a chat at its format's
    end-of-turn token, found in tokenizer.json's added tokens."""
    from test_runner import train_tokenizer

    from pocket.llm.models.recipe import export_checkpoint

    make_checkpoint("llama", tmp_path, vocab_size=320)
    tok = train_tokenizer(tmp_path / "tokenizer.json")  # <|endoftext|> 0, <|im_start|> 1, <|im_end|> 2
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config | {"eos_token_id": 0}))
    (tmp_path / "generation_config.json").unlink()
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{% for m in messages %}"
                                                                "<|im_start|>{{ m.content }}<|im_end|>{% endfor %}"}))
    module = pocket.Module.from_bytes(export_checkpoint(str(tmp_path), max_seq_len=32).data)
    assert module.metadata["chat_template"] == "chatml"
    assert module.metadata["eos_ids"] == f"0,{tok.token_to_id('<|im_end|>')}" == "0,2"


def test_cli_checkpoint_export_quiet_and_missing_folder(tmp_path):
    """`pocket llm export --checkpoint DIR -q` prints only its result line; an empty or missing
    folder is an error naming it (an empty --checkpoint "" once fell through to --config)."""
    import subprocess
    import sys

    make_checkpoint("gemma", tmp_path / "ckpt", tie=True)
    out = tmp_path / "m.pocket"
    run = subprocess.run([sys.executable, "-m", "pocket", "llm", "export", "--checkpoint", str(tmp_path / "ckpt"),
                          "-o", str(out), "--max-seq-len", "32", "-q"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert run.stdout.startswith(f"wrote {out}") and pocket.load(str(out)).metadata["model_family"] == "gemma"
    for folder in ("", str(tmp_path / "missing")):
        run = subprocess.run([sys.executable, "-m", "pocket", "llm", "export", "--checkpoint", folder, "-o",
                              str(tmp_path / "x.pocket")], capture_output=True, text=True)
        assert run.returncode != 0 and "no config.json (expected a Hugging Face checkpoint folder)" in run.stderr
