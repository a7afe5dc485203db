"""Golden programs: small models exported with fixed seeds, plus their inputs and eager
PyTorch outputs in .io files (read by the C tests, natively and under qemu).

    python tests/golden/make_golden.py           # rewrite the golden files
    python tests/golden/make_golden.py --check   # exit 1 if a re-export differs

--check wants every byte of the programs and of the .io inputs. The .io outputs are eager
PyTorch's, whose kernels round differently on different CPUs (AVX2 against AVX-512), so they
only need to agree within IO_RTOL / IO_ATOL (and are not rewritten when they do).

.io format (little-endian): u32 magic "PKIO", u32 n_inputs, u32 n_outputs, then each tensor:
u32 dtype (pk_dtype), u32 ndim, i64 dims[ndim], raw data.

The tiny LLM (tiny_llm.pocket + tiny_llm.tokenizer.json, random weights, ChatML template)
comes with tiny_llm.greedy.txt: lines "prompt_ids ...", "greedy_ids ..." (eager PyTorch's
greedy continuation) and "prompt_text <text>" (whose encoding is prompt_ids).
"""

import argparse
import pathlib
import struct
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import pocket  # noqa: E402
from examples import models  # noqa: E402
from pocket.exporter.emit import DTYPES  # noqa: E402


class CoverageOps(torch.nn.Module):
    """One use of each kernel added for op coverage (issue 15), so that the C tests (natively,
    under ASan, under qemu-aarch64) and the corruption sweeps run them too."""

    def forward(self, x, idx):  # x (2, 3, 4, 4) float32, idx (2, 3) int64 in [0, 4)
        F = torch.nn.functional
        u = x.clamp(-0.9, 0.9)
        unary = (torch.tan(u) + torch.asin(u) + torch.acos(u) + torch.atan(x) + torch.sinh(u)
                 + torch.cosh(u) + torch.asinh(x) + torch.acosh(x.abs() + 1) + torch.atanh(u)
                 + torch.expm1(u) + torch.log2(x.abs() + 1) + torch.log10(x.abs() + 1)
                 + torch.trunc(x * 3) + torch.round(x, decimals=2))
        norm = F.normalize(x.flatten(2), dim=-1) + torch.linalg.vector_norm(x, 1, dim=1).unsqueeze(1).flatten(2)
        up = F.interpolate(x, scale_factor=2.0, mode="bilinear") + F.interpolate(x, size=(8, 8), mode="nearest")
        stats = torch.stack([x.var(dim=(2, 3), unbiased=True), x.prod(dim=3).mean(2)]).sum(0)
        flags = torch.isinf(x / (x - x[:, :1])) | (torch.full_like(idx, 1).fill_(5) & 3).bool().any()
        ints = (idx ^ 6) | 1
        src, where = x[:, :, 0, :3], idx.unsqueeze(-1).expand(2, 3, 3)
        scat = torch.zeros(2, 3, 4).scatter_add(2, where, src).scatter_reduce(2, where, src, "amax")
        pads = F.pad(x, (1, 2, 2, 1), mode="reflect") + F.pad(x, (1, 2, 2, 1), mode="replicate")
        top, where_top = torch.topk(x.flatten(1), 5)
        ordered, order = torch.sort(x, dim=2, descending=True)
        return (unary, norm, up, stats, flags, ints, scat, x.max() - x.min(), x.prod(), pads, top, where_top,
                ordered, order)


class CoverageOps2(torch.nn.Module):
    """The same for the second batch of core ops (pools in 1 and 3 dims, instance norm, grid
    sampling, col2im, distances, embedding bags, masked_scatter, diagonal, as_strided)."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.bag = torch.nn.Parameter(torch.randn(10, 4, generator=g), requires_grad=False)

    def forward(self, x, idx):  # x (2, 3, 4, 4) float32, idx (2, 3) int64 in [0, 4)
        F = torch.nn.functional
        seq = x.flatten(2)  # (2, 3, 16)
        vol = x.unsqueeze(2).expand(2, 3, 2, 4, 4).contiguous()
        pools = (F.avg_pool1d(seq, 3, 2, 1), F.adaptive_avg_pool1d(seq, 5), F.avg_pool3d(vol, 2),
                 F.max_pool3d(vol, (1, 2, 2), return_indices=True)[1], F.adaptive_avg_pool3d(vol, (1, 3, 2)))
        inst = F.instance_norm(x, weight=torch.ones(3), bias=torch.zeros(3))
        theta = torch.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]]).expand(2, 2, 3)
        sampled = F.grid_sample(x, F.affine_grid(theta, [2, 3, 3, 5], align_corners=False), align_corners=False)
        folded = F.fold(F.unfold(x, 2), (4, 4), 2)
        dists = torch.cdist(seq, seq[:, :2]) + F.pdist(seq[0]).sum()
        bags = F.embedding_bag(idx.flatten(), self.bag, torch.tensor([0, 2, 5]), mode="mean")
        scattered = x.masked_scatter(x > 0.5, seq.flip(-1))
        diag = torch.diagonal(x, 0, 2, 3) + x.as_strided((2, 3, 4), (48, 16, 5))
        return (*pools, inst, sampled, folded, dists, bags, scattered, diag)


def golden_models():
    torch.manual_seed(0)
    mlp = models.MLP((16, 32, 8)).eval()
    torch.manual_seed(1)
    cnn = models._init_batchnorm(models.ResNet(widths=(8, 16), classes=4))
    torch.manual_seed(2)
    enc = models.Encoder(vocab=50, dim=32, heads=4, layers=1, max_len=16).eval()
    g = torch.Generator().manual_seed(3)
    return {
        "mlp": (mlp, (torch.randn(3, 16, generator=g),),
                ({0: torch.export.Dim("batch", min=1, max=16)},)),
        "cnn": (cnn, (torch.randn(1, 3, 32, 32, generator=g),), None),
        "encoder": (enc, (torch.randint(0, 50, (1, 12), generator=g),), None),
        "coverage_ops": (CoverageOps(), (torch.randn(2, 3, 4, 4, generator=g), torch.randint(0, 4, (2, 3), generator=g)),
                         None),
        "coverage_ops2": (CoverageOps2(), (torch.randn(2, 3, 4, 4, generator=g), torch.randint(0, 4, (2, 3), generator=g)),
                          None),
    }


IO_RTOL, IO_ATOL = 1e-5, 1e-6


def io_tensors(data: bytes) -> tuple[int, list[torch.Tensor]]:
    """The tensors of an .io file (inputs, then outputs) and its number of inputs."""
    dtypes = {int(code): dtype for dtype, code in DTYPES.items()}
    _, n_in, n_out = struct.unpack_from("<4sII", data)
    pos, tensors = 12, []
    for _ in range(n_in + n_out):
        code, ndim = struct.unpack_from("<II", data, pos)
        shape = struct.unpack_from(f"<{ndim}q", data, pos + 8)
        pos += 8 + 8 * ndim
        dtype = dtypes[code]
        size = torch.Size(shape).numel() * dtype.itemsize
        tensors.append(torch.frombuffer(bytearray(data[pos:pos + size]), dtype=dtype).reshape(shape))
        pos += size
    return n_in, tensors


def same_io(old: bytes, new: bytes) -> bool:
    (n_old, a), (n_new, b) = io_tensors(old), io_tensors(new)
    if n_old != n_new or len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(a, b)):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        exact = i < n_old or not x.dtype.is_floating_point
        if not (torch.equal(x, y) if exact else torch.allclose(x, y, IO_RTOL, IO_ATOL, equal_nan=True)):
            return False
    return True


def io_bytes(inputs, outputs) -> bytes:
    out = bytearray(struct.pack("<4sII", b"PKIO", len(inputs), len(outputs)))
    for t in (*inputs, *outputs):
        t = t.detach().contiguous()
        out += struct.pack("<II", DTYPES[t.dtype], t.dim())
        out += struct.pack(f"<{t.dim()}q", *t.shape)
        out += t.numpy().tobytes()
    return bytes(out)


TINY_LLM_CORPUS = ["Once upon a time there was a tiny robot. It liked to read books. " * 2,
                   "def add(a, b):\n    return a + b\n", "The capital of France is Paris. 12345",
                   "naïve café — 東京 🙂"] * 20


def tiny_llm() -> dict[str, bytes]:
    import tempfile

    from tokenizers import Tokenizer, decoders, models as tok_models, pre_tokenizers, trainers

    from pocket.llm.models import LlmConfig, Transformer, export_llm

    tok = Tokenizer(tok_models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TINY_LLM_CORPUS, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    with tempfile.TemporaryDirectory() as tmp:
        tok.save(f"{tmp}/tokenizer.json")
        tok_bytes = open(f"{tmp}/tokenizer.json", "rb").read()
    config = LlmConfig(vocab_size=tok.get_vocab_size(), dim=64, n_layers=2, n_heads=4, n_kv_heads=2,
                       hidden_dim=128, head_dim=16, eos_ids=(tok.token_to_id("<|im_end|>"),))
    torch.manual_seed(4)
    model = Transformer(config, max_seq_len=128).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
    prompt_text = "Once upon a time"
    prompt = tok.encode(prompt_text).ids
    greedy = model.generate_greedy(prompt, 16, eos_ids=config.eos_ids)
    lines = [f"prompt_ids {' '.join(map(str, prompt))}", f"greedy_ids {' '.join(map(str, greedy))}",
             f"prompt_text {prompt_text}"]
    return {"tiny_llm.pocket": export_llm(model, chat_template="chatml").data,
            "tiny_llm.tokenizer.json": tok_bytes,
            "tiny_llm.greedy.txt": ("\n".join(lines) + "\n").encode()}


def build() -> dict[str, bytes]:
    files = tiny_llm()
    for name, (model, inputs, shapes) in golden_models().items():
        files[f"{name}.pocket"] = pocket.export(model, inputs, dynamic_shapes=shapes).data
        with torch.no_grad():
            y = model(*inputs)
        files[f"{name}.forward.io"] = io_bytes(inputs, y if isinstance(y, tuple) else (y,))
    return files


def unchanged(path: pathlib.Path, data: bytes) -> bool:
    if not path.exists():
        return False
    old = path.read_bytes()
    return old == data or (path.suffix == ".io" and same_io(old, data))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    files = build()
    stale = [name for name, data in files.items() if not unchanged(HERE / name, data)]
    if args.check:
        if stale:
            sys.exit(f"golden files differ from a fresh export: {stale}")
        return
    for name in stale:
        (HERE / name).write_bytes(files[name])
        print(f"wrote {name} ({len(files[name])} bytes)")


if __name__ == "__main__":
    main()
