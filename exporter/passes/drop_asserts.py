"""Removes the runtime assertions torch.export leaves (the runtime checks input bounds)."""

from pocket.exporter.ops import DROPPED


def drop_asserts(mg) -> None:
    for node in list(mg.graph.nodes):
        if node.op == "call_function" and node.target in DROPPED:
            mg.graph.erase_node(node)
