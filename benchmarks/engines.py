"""One greedy loop over every engine, so every LLM row of the benchmarks does the same work.

Each engine is wrapped in a small driver with the same four calls:

    prefill(ids) -> logits of the last prompt token (numpy, vocab)
    decode(token, pos) -> logits of the next token
    reset()                 forget the sequence (fresh KV cache)
    threads() -> {phase: n} the thread counts the engine itself reports it uses
    tokens() -> int | None  tokens the engine holds in its cache, as it counts them

Drivers import their engine lazily: a child process loads only the engine it measures (its
peak RSS is that engine's). The thread count is applied before loading and to every phase
(llama.cpp has separate counts for batches and single tokens).
"""

from __future__ import annotations

import time

import numpy as np

from common import Phase, warm_up


class PocketLLM:
    """A .pocket LLM program (prefill/decode methods) through pocket.load; no torch."""

    name = "pocket"

    def __init__(self, path: str, threads: int):
        import pocket

        self.module = pocket.load(path)
        self.module.set_num_threads(threads)
        self.pos = 0

    def threads(self) -> dict:
        n = self.module.num_threads
        return {"prefill": n, "decode": n}

    def tokens(self):
        return None  # the runtime keeps no count of its own; the harness counts the ids it passed

    def reset(self):
        self.module.reset_buffers()

    def prefill(self, ids):
        return self.module.run("prefill", np.asarray([ids], dtype=np.int64), np.array([0]))[0]

    def decode(self, token, pos):
        return self.module.run("decode", np.array([[token]], dtype=np.int64), np.array([pos]))[0]


class LlamaCpp:
    """llama.cpp through llama-cpp-python on a GGUF file."""

    name = "llama.cpp"

    def __init__(self, gguf: str, threads: int, n_ctx: int = 1024):
        from llama_cpp import Llama

        # n_threads is for single tokens, n_threads_batch for prompts: both must be set, or the
        # prompt runs on every core.
        self.llm = Llama(model_path=gguf, n_threads=threads, n_threads_batch=threads, n_ctx=n_ctx, n_batch=n_ctx,
                         verbose=False)

    def threads(self) -> dict:
        import llama_cpp

        ctx = self.llm._ctx.ctx
        return {"prefill": int(llama_cpp.llama_n_threads_batch(ctx)), "decode": int(llama_cpp.llama_n_threads(ctx))}

    def tokens(self):
        return int(self.llm.n_tokens)

    def reset(self):
        self.llm.reset()

    def _last_logits(self):
        # Llama.eval keeps no logits unless logits_all (which would compute them for every
        # prompt token): read the last token's row from the context.
        import llama_cpp

        row = llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(row, shape=(self.llm.n_vocab(),)).copy()

    def prefill(self, ids):
        self.llm.eval(list(ids))
        return self._last_logits()

    def decode(self, token, pos):
        if pos != self.llm.n_tokens:
            raise RuntimeError(f"llama.cpp holds {self.llm.n_tokens} tokens, the loop is at {pos}")
        self.llm.eval([token])
        return self._last_logits()


class ExecuTorchLLM:
    """A program from ExecuTorch's llama recipe (see executorch_llama.py): one method,
    forward(tokens (1, T), input_pos (1,)) -> logits of the last token. The KV cache is not
    cleared by reset(): each sequence overwrites it from position 0 and attends up to input_pos."""

    name = "executorch"

    def __init__(self, pte: str, threads: int):
        import torch
        from executorch.extension.pybindings import portable_lib
        from executorch.runtime import Runtime

        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  registers llama:: kernels
        import executorch.kernels.quantized  # noqa: F401  registers the 4-bit embedding kernel

        self.torch, self.portable_lib = torch, portable_lib
        # XNNPACK and ExecuTorch's own parallel kernels share this pool (default: one thread a
        # core); it must be sized before the program is loaded.
        portable_lib._unsafe_reset_threadpool(threads)
        torch.set_num_threads(threads)
        self.method = Runtime.get().load_program(pte).load_method("forward")

    def threads(self) -> dict:
        n = int(self.portable_lib._threadpool_get_thread_count())
        return {"prefill": n, "decode": n}

    def tokens(self):
        return None

    def reset(self):
        pass

    def prefill(self, ids):
        t = self.torch
        return self.method.execute([t.tensor([list(ids)], dtype=t.long), t.tensor([0])])[0][0].numpy()

    def decode(self, token, pos):
        t = self.torch
        return self.method.execute([t.tensor([[token]], dtype=t.long), t.tensor([pos])])[0][0].numpy()


class TorchLLM:
    """Eager PyTorch: a pocket.llm.models.Transformer (fp32) or a transformers model."""

    def __init__(self, model, threads: int, hf: bool = False):
        import torch

        torch.set_num_threads(threads)
        self.torch, self.model, self.hf = torch, model, hf
        self.name = "transformers" if hf else "eager"
        self.past = None

    @classmethod
    def from_gguf(cls, gguf: str, threads: int):
        import os
        import warnings

        import torch
        from transformers import AutoModelForCausalLM

        torch.set_num_threads(threads)
        warnings.filterwarnings("ignore")
        folder, name = os.path.split(gguf)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
        return cls(model, threads, hf=True)

    def threads(self) -> dict:
        n = self.torch.get_num_threads()
        return {"prefill": n, "decode": n}

    def tokens(self):
        return int(self.past.get_seq_length()) if self.hf and self.past is not None else None

    def reset(self):
        self.past = None
        if not self.hf:
            for layer in self.model.model.layers:
                layer.self_attn.k_cache.zero_()
                layer.self_attn.v_cache.zero_()

    def _run(self, ids, pos):
        t = self.torch
        with t.no_grad():
            x = t.tensor([list(ids)], dtype=t.long)
            if not self.hf:
                return self.model(x, t.tensor([pos]))[0].numpy()
            out = self.model(x, past_key_values=self.past, use_cache=True)
            self.past = out.past_key_values
            return out.logits[0, -1].numpy()

    def prefill(self, ids):
        self.past = None
        return self._run(ids, 0)

    def decode(self, token, pos):
        return self._run([token], pos)


# ---- the measurement --------------------------------------------------------------------------

def greedy(engine, ids, n_decode: int) -> dict:
    """Prefill `ids`, then `n_decode` greedy decode steps (end tokens ignored), after warm-up
    passes (prefill + 4 steps, repeated for at least 0.3 s: common.warm_up) that fault the
    weights in and wake every core the engine uses. Token counts are the ids this
    loop passed to the engine, checked against the engine's own count where it keeps one.

    Returns prompt/decode token counts, prefill and decode ms and tok/s, TTFT (prefill + the
    first argmax), the thread counts the engine reports and the cores each phase kept busy."""
    def warm_pass():
        engine.reset()
        logits = engine.prefill(ids)
        for i in range(4):
            logits = engine.decode(int(np.argmax(logits)), len(ids) + i)

    warm_up(warm_pass, runs=1)
    engine.reset()
    with Phase() as pre:
        token = int(np.argmax(engine.prefill(ids)))
    after_prefill = engine.tokens()
    out = [token]
    with Phase() as dec:
        for i in range(n_decode):
            token = int(np.argmax(engine.decode(token, len(ids) + i)))
            out.append(token)
    after_decode = engine.tokens()
    for counted, want in ((after_prefill, len(ids)), (after_decode, len(ids) + n_decode)):
        if counted is not None and counted != want:
            raise RuntimeError(f"{engine.name} holds {counted} tokens where the loop passed {want}")
    return {"prompt_tokens": len(ids), "decode_tokens": n_decode, "engine_tokens": after_decode,
            "ttft_ms": pre.ms, "prefill_tok_s": len(ids) / pre.ms * 1e3,
            "decode_ms": dec.ms / n_decode, "decode_tok_s": n_decode / dec.ms * 1e3,
            "threads": engine.threads(), "cores": {"prefill": pre.cores, "decode": dec.cores}, "output": out[:16]}


def teacher_forced(engine, sequences: list[tuple[int, list[int]]]) -> list[list[int]]:
    """For each (n_prompt, ids): the engine's argmax after every prefix ids[:j], j = n_prompt ..
    len(ids) - 1 (prefill of the prompt, then ids[j] fed one at a time whatever it predicted)."""
    preds = []
    for n, ids in sequences:
        engine.reset()
        p = [int(np.argmax(engine.prefill(ids[:n])))]
        for j in range(n, len(ids) - 1):
            p.append(int(np.argmax(engine.decode(ids[j], j))))
        preds.append(p)
    return preds


def timed_load(make) -> tuple[object, float]:
    t0 = time.perf_counter()
    engine = make()
    return engine, (time.perf_counter() - t0) * 1e3
