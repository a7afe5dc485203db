"""pocket.llm: run chat models exported by `pocket llm export`. Imports no torch.

    runner = pocket.llm.Runner("smol.pocket", "tokenizer.json")
    for piece in runner.generate("Once upon a time", max_new_tokens=64, temperature=0.0):
        print(piece, end="", flush=True)
    print(runner.stats)        # load_ms, ttft_ms, prefill_tok_s, decode_tok_s, ...

    chat = runner.chat(system="You are helpful.")
    for piece in chat.send("What is the capital of France?"):
        print(piece, end="")

pocket.llm.models (model code, checkpoints, export) needs torch.
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

__all__ = ["Runner", "Chat", "Tokenizer"]


def __getattr__(name):
    # The compiled runtime is imported on first use, so that pocket.llm.models (the export
    # side, in this package) imports without it.
    if name == "Tokenizer":
        from pocket import _native

        return getattr(_native, "Tokenizer", None)
    raise AttributeError(f"module 'pocket.llm' has no attribute {name!r}")


class Runner:
    """A chat model: a .pocket LLM program, its tokenizer and a sampler.

    Args:
        model: the .pocket file (from `pocket llm export`).
        tokenizer: tokenizer.json, a tiktoken file or a llama2.c tokenizer.bin; None uses the
            tokenizer embedded in the program.
        num_threads: threads for the kernels; 0 = the performance cores.
    Raises:
        PocketError: a missing or malformed file, a program that is not an LLM, a tokenizer
            that does not fit the model's vocabulary.

    Threads: a runner runs one call at a time. Starting a generation (or reset, chat) while
    another thread is inside a call on it raises PocketError with status "BUSY"; an
    iterator whose generation was replaced by a later one raises status "CANCELLED" on its
    next step. stop(), stats, position and set_num_threads work from any thread at any time;
    the GIL is released while the model runs.
    """

    def __init__(self, model: str | os.PathLike | int, tokenizer: str | os.PathLike | None = None,
                 num_threads: int = 0, *, offset: int = 0, length: int | None = None):
        from pocket import _native
        from pocket.runtime import file_region

        # model may be an open descriptor, and offset/length a region of the file (as pocket.load).
        tok = os.fspath(tokenizer) if tokenizer else ""
        if isinstance(model, int) or offset or length is not None:
            self._native = file_region(model, offset, length, lambda *region: _native.Runner(*region, tok))
        else:
            self._native = _native.Runner(os.fspath(model), tok)
        self._native.set_num_threads(num_threads)
        # The runner's own tokenizer (encode/decode from Python), not a second copy of it.
        self.tokenizer = self._native.tokenizer

    def generate(self, prompt: str, max_new_tokens: int = 256, *, temperature: float = 0.0, top_k: int = 0,
                 top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0, seed: int = 0,
                 stop: Sequence[str] = ()) -> Iterator[str]:
        """Streams the continuation of `prompt` as text pieces (never splitting a character).

        Each call starts a new text (BOS added when the tokenizer has one); chat() keeps a
        conversation. The generation starts (and a bad setting raises) at the call; the pieces
        are pulled from the C++ runner's one generation loop as the iterator is read."""
        config = _config(max_new_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed, stop)
        return self._pieces(self._native.begin(prompt, config))

    def generate_ids(self, ids: Sequence[int], max_new_tokens: int = 256, *, temperature: float = 0.0,
                     top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                     seed: int = 0) -> list[int]:
        """Generated token ids for prompt `ids` (no text decoding); for tests and tools."""
        config = _config(max_new_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed, ())
        return self._native.generate_ids(list(ids), config)

    def chat(self, system: str | None = None) -> "Chat":
        """A new conversation (the cache is reset); turns are formatted with the model's template.
        system: the system prompt; None uses the model's default (see default_system_prompt),
        "" none at all."""
        return Chat(self, system)

    def reset(self) -> None:
        """Forgets the conversation in the cache."""
        self._native.reset()

    def set_num_threads(self, n: int) -> None:
        """Threads the kernels use; 0 = the default (the performance cores)."""
        self._native.set_num_threads(n)

    @property
    def num_threads(self) -> int:
        return self._native.num_threads

    def set_memory_limit(self, nbytes: int) -> None:
        """Bytes the model may allocate for its arenas, KV cache and scratch space (default: the
        machine's physical memory; see pocket.Module.set_memory_limit). Memory is allocated on the
        first generation, so a limit set right after loading applies to all of it; a model that
        needs more fails with PocketError OUT_OF_MEMORY, naming the limit."""
        self._native.set_memory_limit(nbytes)

    def stop(self) -> None:
        """Ends a running generation after the current token (safe from another thread)."""
        self._native.stop()

    @property
    def stats(self) -> dict:
        """load_ms, ttft_ms, prefill_tok_s, decode_tok_s, prompt_tokens, generated_tokens, stop_reason."""
        return self._native.stats

    @property
    def position(self) -> int:
        return self._native.position

    @property
    def max_seq_len(self) -> int:
        return self._native.max_seq_len

    @property
    def default_system_prompt(self) -> str:
        return self._native.default_system_prompt

    @property
    def chat_template(self) -> str:
        return self._native.chat_template

    def _pieces(self, generation: int) -> Iterator[str]:
        while True:
            piece, done = self._native.next(generation)
            if done:
                return
            yield piece.decode("utf-8", errors="replace")


class Chat:
    """A multi-turn conversation; earlier turns stay in the KV cache."""

    def __init__(self, runner: Runner, system: str | None):
        self.runner = runner
        runner.reset()
        runner._native.set_system_prompt(runner._native.default_system_prompt if system is None else system)

    def send(self, message: str, max_new_tokens: int = 256, **sampling) -> Iterator[str]:
        """Streams the assistant's reply to `message`."""
        config = _config(max_new_tokens, sampling.pop("temperature", 0.0), sampling.pop("top_k", 0),
                         sampling.pop("top_p", 1.0), sampling.pop("min_p", 0.0),
                         sampling.pop("repetition_penalty", 1.0), sampling.pop("seed", 0), sampling.pop("stop", ()))
        if sampling:
            raise TypeError(f"unknown sampling options: {sorted(sampling)}")
        return self.runner._pieces(self.runner._native.begin_chat(message, config))


def _config(max_new_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed, stop):
    from pocket import _native

    return _native.GenerationConfig(max_new_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed,
                                    list(stop))
