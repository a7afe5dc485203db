"""Source transform: a copy of the model with its Linear and Embedding layers quantized."""

from __future__ import annotations

import copy
import warnings

from torch import nn

from pocket.exporter.quant.config import QuantConfig
from pocket.exporter.quant.formats import WeightFormat
from pocket.exporter.quant.modules import QuantizedEmbedding, QuantizedLinear
from pocket.exporter.quant.ops import ACT_MODES


class QuantizationWarning(UserWarning):
    pass


def quantize_modules(model: nn.Module, config: QuantConfig) -> tuple[nn.Module, dict]:
    """Returns (quantized copy, report). The original model is left as it was.

    Tied weights (an embedding shared with the output layer) are quantized once per layer
    kind: the Linear gets its own packed copy."""
    model = copy.deepcopy(model, _replaced_weights(model, config))
    report = {"linear": 0, "embedding": 0, "skipped": []}
    act_mode = ACT_MODES[config.activations]
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if _swapped(child, config):
                if isinstance(child, nn.Linear):
                    layer = QuantizedLinear(child, config.linear_format(child.in_features), act_mode)
                    report["linear"] += 1
                else:
                    layer = QuantizedEmbedding(child, WeightFormat(config.embedding_bits, config.embedding_group_size,
                                                                   True))
                    report["embedding"] += 1
                setattr(parent, name, layer)
            elif isinstance(child, nn.Linear) and config.linear_bits and not config.linear_fits(child.in_features):
                report["skipped"].append(f"{full} (in_features {child.in_features} % group "
                                         f"{config.linear_group_size})")
            elif (isinstance(child, nn.Embedding) and config.embedding_bits
                  and child.embedding_dim % config.embedding_group_size):
                report["skipped"].append(f"{full} (embedding_dim {child.embedding_dim} % group "
                                         f"{config.embedding_group_size})")
    if report["skipped"]:
        warnings.warn(f"left in fp32: {', '.join(report['skipped'])}", QuantizationWarning, stacklevel=3)
    return model, report


def _swapped(layer: nn.Module, config: QuantConfig) -> bool:
    """Whether quantize_modules replaces `layer` by a stand-in. A Linear or Embedding it leaves
    is fp32 because its width does not fit the group size (named in the warning), or its
    weight is quantized in the exported graph instead (_read_by_parent, _own_forward)."""
    if isinstance(layer, nn.Linear):
        return (bool(config.linear_bits) and config.linear_fits(layer.in_features) and not _read_by_parent(layer)
                and not _own_forward(layer, nn.Linear))
    if isinstance(layer, nn.Embedding):
        return (bool(config.embedding_bits) and not layer.embedding_dim % config.embedding_group_size
                and not _own_forward(layer, nn.Embedding))
    return False


def _read_by_parent(linear: nn.Linear) -> bool:
    """Whether the layer's parent computes with its weight itself instead of calling it
    (nn.MultiheadAttention's out_proj, which PyTorch types NonDynamicallyQuantizableLinear for
    that reason): a stand-in would be dequantized at every run, so it stays, and the exported
    graph's aten.linear of its weight is quantized instead (graph_linear.py)."""
    return isinstance(linear, nn.modules.linear.NonDynamicallyQuantizableLinear)


def _own_forward(layer: nn.Module, base: type) -> bool:
    """Whether `layer` is of a subclass of `base` with a forward of its own (a learned position
    table that adds an offset to its indices or slices its weight, as BART, OPT and Whisper have):
    a stand-in, which computes what the base class does, would change what the model computes
    or take other arguments. The graph's aten.linear / aten.embedding of its weight is quantized
    instead (graph_linear.py)."""
    return type(layer).forward is not base.forward


def _replaced_weights(model: nn.Module, config: QuantConfig) -> dict:
    """A deepcopy memo that keeps the weights only layers quantize_modules replaces read: the
    copy reads them once to quantize and drops them, so copying them (all of an LLM) is wasted."""
    replaced, kept = {}, set()
    for m in model.modules():
        if _swapped(m, config):
            replaced[id(m.weight)] = m.weight
        else:
            kept.update(id(p) for p in m.parameters(recurse=False))
    return {k: v for k, v in replaced.items() if k not in kept}
