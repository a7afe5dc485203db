"""Quantized stand-ins for nn.Linear and nn.Embedding; their forward calls the pocket:: ops,
so torch.export records those ops with the packed weights as constants."""

from __future__ import annotations

import torch
from torch import nn

from pocket.exporter.quant import ops
from pocket.exporter.quant.formats import WeightFormat, dequantize, quantize

HALF = (torch.float16, torch.bfloat16)


class QuantizedLinear(nn.Module):
    def __init__(self, linear: nn.Linear, fmt: WeightFormat, act_mode: int):
        super().__init__()
        qweight, scales, mins = quantize(linear.weight, fmt)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scales", scales)
        self.register_buffer("mins", mins)
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().float().clone())
        self.fmt, self.act_mode = fmt, act_mode
        self.in_features, self.out_features = linear.in_features, linear.out_features

    @classmethod
    def from_packed(cls, qweight, scales, mins, bias, fmt: WeightFormat, act_mode: int) -> "QuantizedLinear":
        """A layer over weights that are already quantized (e.g. from a GGUF file)."""
        self = cls.__new__(cls)
        nn.Module.__init__(self)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scales", scales)
        self.register_buffer("mins", mins)
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())
        self.fmt, self.act_mode = fmt, act_mode
        self.out_features, self.in_features = scales.shape[0], scales.shape[1] * fmt.group_size
        return self

    def forward(self, x):
        y = ops.linear_q(x, self.qweight, self.scales, self.mins, self.bias, self.fmt.bits, self.fmt.group_size,
                         self.act_mode)
        return y.to(x.dtype) if x.dtype in HALF else y  # what nn.Linear returns (computed in float32)

    @property
    def weight(self) -> torch.Tensor:
        """The weight the layer computes with, dequantized to fp32, for code that reads a Linear's
        weight instead of calling it (nn.TransformerEncoderLayer's fast-path checks, a weight
        tied by hand: F.linear(x, layer.weight)). Exported, such a read dequantizes the stored
        weight when the program runs (the file keeps it quantized)."""
        return dequantize(self.qweight, self.scales, self.mins, self.fmt)

    def extra_repr(self) -> str:
        return f"{self.in_features} -> {self.out_features}, {self.fmt}, act_mode={self.act_mode}"


class QuantizedEmbedding(nn.Module):
    def __init__(self, embedding: nn.Embedding, fmt: WeightFormat):
        super().__init__()
        qweight, scales, mins = quantize(embedding.weight, fmt)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scales", scales)
        self.register_buffer("mins", mins)
        self.fmt = fmt
        # What code reads of an nn.Embedding besides its weight (Whisper's encoder: the table's
        # length, to look up every position).
        self.num_embeddings, self.embedding_dim = embedding.num_embeddings, embedding.embedding_dim
        self.padding_idx = embedding.padding_idx
        self.dtype = embedding.weight.dtype  # of the rows it returns, as nn.Embedding

    @classmethod
    def from_packed(cls, qweight, scales, mins, fmt: WeightFormat) -> "QuantizedEmbedding":
        self = cls.__new__(cls)
        nn.Module.__init__(self)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scales", scales)
        self.register_buffer("mins", mins)
        self.fmt = fmt
        self.num_embeddings, self.embedding_dim = scales.shape[0], scales.shape[1] * fmt.group_size
        self.padding_idx = None
        self.dtype = torch.float32
        return self

    def forward(self, indices):
        rows = ops.embedding_q(self.qweight, self.scales, self.mins, indices, self.fmt.bits, self.fmt.group_size)
        return rows.to(self.dtype) if self.dtype in HALF else rows

    @property
    def weight(self) -> torch.Tensor:
        """The table the layer looks rows up in, dequantized to fp32, for code that reads an
        Embedding's weight (an output layer tied by hand: x @ emb.weight.t()). It is every row
        looked up, so that the exporter sees the stored table: a linear or matrix product by it
        becomes a pocket::linear_q of that table (quant/graph_linear.py), not an fp32 table
        rebuilt on every forward."""
        rows = torch.arange(self.qweight.shape[0], device=self.qweight.device)
        return ops.embedding_q(self.qweight, self.scales, self.mins, rows, self.fmt.bits, self.fmt.group_size)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, {self.fmt}"
