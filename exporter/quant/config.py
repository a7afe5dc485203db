"""Quantization settings: a weight format and an activation mode per kind of layer.

Named schemes:
    "8da4w"  Linear: int4 symmetric group-wise weights (group 32 by default), int8 dynamic
             per-token activations; embeddings: int4 group-wise (weight-only)
    "int8w"  Linear: int8 per-channel weight-only (fp32 activations); embeddings: int8
    "int8"   static int8 for CNNs: per-channel int8 convolution weights, per-tensor int8
             activations calibrated on user data; Linear layers as int8w
"""

from __future__ import annotations

import dataclasses

from pocket.exporter.errors import ExportError
from pocket.exporter.quant.formats import WeightFormat

GROUP_SIZES = (32, 64, 128, 256)


@dataclasses.dataclass(frozen=True)
class QuantConfig:
    """What to quantize and how. Layers whose width the group size does not divide stay fp32
    (with a warning). Linear layers are swapped (transform.py); the constant weights a model
    applies as linears itself (attention, recurrent layers) are quantized in the exported graph
    (graph_linear.py)."""

    name: str
    linear_bits: int | None = 4        # None: leave Linear layers in fp32
    linear_group_size: int | None = 32  # None: per channel (one group per row)
    linear_symmetric: bool = True
    activations: str = "int8"          # "fp32", "int8" (per token) or "int8_block32"
    embedding_bits: int | None = 4     # None: leave embeddings in fp32
    embedding_group_size: int = 32
    static_int8_conv: bool = False     # int8 convolutions calibrated on data

    def linear_fits(self, in_features: int) -> bool:
        """Whether the group size divides a Linear's width (per channel: always)."""
        return not in_features % (self.linear_group_size or in_features)

    def linear_format(self, in_features: int) -> WeightFormat:
        return WeightFormat(self.linear_bits, self.linear_group_size or in_features, self.linear_symmetric)

    def describe(self) -> str:
        parts = []
        if self.linear_bits:
            group = f"group {self.linear_group_size}" if self.linear_group_size else "per channel"
            parts.append(f"linear int{self.linear_bits} {'sym' if self.linear_symmetric else 'asym'} {group}, "
                         f"{self.activations} activations")
        if self.embedding_bits:
            parts.append(f"embedding int{self.embedding_bits} group {self.embedding_group_size}")
        if self.static_int8_conv:
            parts.append("conv int8 static (per-channel weights, per-tensor activations)")
        return f"{self.name}: " + "; ".join(parts)


def resolve(scheme: str | QuantConfig | None, group_size: int | None = None) -> QuantConfig | None:
    """A QuantConfig from a scheme name (or a config, returned as is); None for no quantization."""
    if scheme is None or isinstance(scheme, QuantConfig):
        if group_size is not None and scheme is not None:
            raise ExportError("pass group_size inside the QuantConfig")
        return scheme
    if group_size is not None and group_size not in GROUP_SIZES:
        raise ExportError(f"group size {group_size} is not supported; choose one of {GROUP_SIZES}")
    if scheme == "8da4w":
        g = group_size or 32
        return QuantConfig("8da4w", 4, g, True, "int8", 4, g)
    if scheme == "int8w":
        return QuantConfig("int8w", 8, group_size, True, "fp32", 8, group_size or 32)
    if scheme == "int8":
        return QuantConfig("int8", 8, None, True, "fp32", None, 32, static_int8_conv=True)
    raise ExportError(f"unknown quantization scheme {scheme!r}; choose 8da4w, int8w or int8 (or pass a QuantConfig)")
