"""Evaluates ops whose inputs are all constants (e.g. a transposed weight) at export time.

Folds only when the result is no larger than its inputs, so constants never bloat the
file (an expand of a constant stays an op).
"""


import torch


def constant_fold(mg) -> None:
    for node in list(mg.graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        inputs = node.all_input_nodes
        if not inputs or any(n.name not in mg.constants for n in inputs):
            continue
        if node.target._schema.is_mutable or not isinstance(node.meta.get("val"), torch.Tensor):
            continue
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: mg.constants[n.name])
        value = node.target(*args, **kwargs)
        if value.nbytes > sum(mg.constants[n.name].nbytes for n in inputs):
            continue
        folded = mg.add_constant(f"{node.name}_folded", value.contiguous())
        mg.replace_uses(node, folded)
        mg.graph.erase_node(node)


