"""Runs cache updates in place: pocket::update_cache(buffer, ...) whose result becomes the
buffer's new value writes straight into the mutable buffer instead of copying the whole
cache into a new tensor and back (a KV cache would otherwise be copied twice per token).

Safe when the update is the buffer's only reader, so no op sees the old contents after
they are overwritten.
"""

import torch

from pocket.exporter import custom_ops  # noqa: F401  (defines torch.ops.pocket.*)


def reinplace(mg) -> None:
    buffer_nodes = {mg.buffers[n.name]: n for n in mg.graph.nodes if n.name in mg.buffers}
    for fqn, node in mg.mutations:
        if not isinstance(node, torch.fx.Node) or node.target is not torch.ops.pocket.update_cache.default:
            continue
        buffer = buffer_nodes.get(fqn)
        if node.args[0] is buffer and len(buffer.users) == 1:
            node.meta["pocket_inplace_buffer"] = buffer
