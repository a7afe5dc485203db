"""Stage 3: graph passes, run in this order by run_passes()."""

from pocket.exporter.passes.channels_last import channels_last
from pocket.exporter.passes.check_support import check_support
from pocket.exporter.passes.constant_fold import constant_fold
from pocket.exporter.passes.drop_asserts import drop_asserts
from pocket.exporter.passes.float32_compute import compute_in_float32
from pocket.exporter.passes.fold_batchnorm import fold_batchnorm
from pocket.exporter.passes.fuse_activation import fuse_conv_activation
from pocket.exporter.passes.pack_linear import pack_linear_q
from pocket.exporter.passes.reinplace import reinplace


def run_passes(mg, int8_calibration: list | None = None, quant=None) -> int:
    """Runs the passes; with `int8_calibration` (a list, maybe empty) also static int8
    quantization of the convolutions, with `quant` (a QuantConfig) that of the linears and
    embedding lookups the module swap left (quant/graph_linear.py). Half-precision arithmetic
    is computed in float32 first (float32_compute.py). Returns how many convolutions were
    quantized."""
    drop_asserts(mg)
    compute_in_float32(mg)
    fold_batchnorm(mg)
    constant_fold(mg)
    quantized = 0
    if int8_calibration is not None:
        from pocket.exporter.quant.static_int8 import quantize_convolutions

        quantized = quantize_convolutions(mg, int8_calibration)
    if quant is not None:
        from pocket.exporter.quant.graph_linear import quantize_graph_embeddings, quantize_graph_linears

        quantize_graph_linears(mg, quant)
        quantize_graph_embeddings(mg, quant)
    fuse_conv_activation(mg)
    channels_last(mg)
    pack_linear_q(mg)
    mg.graph.eliminate_dead_code()
    _drop_unused_constants(mg)
    check_support(mg)
    reinplace(mg)
    return quantized


def _drop_unused_constants(mg) -> None:
    for node in list(mg.graph.nodes):
        if node.op == "placeholder" and node.name in mg.constants and not node.users:
            del mg.constants[node.name]
            mg.graph.erase_node(node)
