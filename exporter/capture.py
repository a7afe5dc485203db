"""Stage 1: capture a method with torch.export and lift it into a MethodGraph.

A MethodGraph is the exporter's working form of one method: the fx graph after export, with
parameters and constant buffers turned into `constants` (node name -> tensor), mutated
buffers into `buffers` (node name -> fully qualified buffer name) and the user-visible
inputs/outputs listed in order.
"""

from __future__ import annotations

import collections
import dataclasses

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

from pocket.exporter.constants import Constants
from pocket.exporter.errors import ExportError


@dataclasses.dataclass
class MethodGraph:
    name: str
    graph: torch.fx.Graph
    constants: dict[str, torch.Tensor]      # placeholder name -> value
    buffers: dict[str, str]                 # placeholder name -> buffer FQN (mutated buffers)
    buffer_values: dict[str, torch.Tensor]  # buffer FQN -> initial value
    mutations: list[tuple[str, torch.fx.Node]]  # (buffer FQN, node holding its new value)
    inputs: list[torch.fx.Node]
    outputs: list               # fx nodes, or Python constants
    input_spec: dict
    output_spec: dict
    ranges: dict                # sympy symbol -> ValueRanges (dynamic dim bounds)
    state_names: dict[str, str] = dataclasses.field(default_factory=dict)  # constant/buffer placeholder -> FQN
    shared: Constants = dataclasses.field(default_factory=Constants)  # program-wide constant memo

    def add_constant(self, name: str, value: torch.Tensor) -> torch.fx.Node:
        """A new constant placeholder (placeholders stay first in the graph)."""
        with self.graph.inserting_before(next(iter(self.graph.nodes))):
            node = self.graph.placeholder(name)
        node.meta["val"] = value
        self.constants[node.name] = value
        return node

    def constant(self, node) -> torch.Tensor | None:
        """The value of `node` when it is a constant placeholder of the graph, else None (any
        other node, or an argument that is not a node)."""
        return self.constants.get(node.name) if isinstance(node, torch.fx.Node) else None

    def call(self, target, args, meta: dict, val, kwargs=None) -> torch.fx.Node:
        """A new call of `target` on `args` at the graph's insertion point, with a copy of `meta`
        whose value is `val`."""
        node = self.graph.call_function(target, tuple(args), kwargs)
        node.meta = {**meta, "val": val}
        return node

    def replace_uses(self, old: torch.fx.Node, new: torch.fx.Node, keep=None) -> None:
        """Every use of `old` becomes `new`: in the graph (but by the users `keep(user)` is true
        for), and in the method's outputs and buffer mutations (plain lists, not uses the graph
        knows about)."""
        old.replace_all_uses_with(new, delete_user_cb=lambda user: keep is None or not keep(user))
        self.outputs = [new if o is old else o for o in self.outputs]
        self.mutations = [(target, new if v is old else v) for target, v in self.mutations]


def capture(name: str, fn, example_inputs: tuple, dynamic_shapes=None) -> ExportedProgram:
    """torch.export of `fn` (an nn.Module or a callable) on `example_inputs`."""
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    module = fn if isinstance(fn, torch.nn.Module) else _CallableModule(fn)
    module.eval()
    try:
        with torch.no_grad():
            return torch.export.export(module, example_inputs, dynamic_shapes=dynamic_shapes, strict=False)
    except Exception as e:  # torch raises many types here; keep its message, name the method
        raise ExportError(f"torch.export failed for method '{name}': {e}{_export_hint(e)}") from e


def _export_hint(e: Exception) -> str:
    """What to change for failures whose torch message does not say it."""
    text = str(e)
    if "Cache" in text and "not a known type" in text:  # transformers' DynamicCache, StaticCache, ...
        return ("\nhint: the model returns a transformers KV cache object; export it without one "
                "(model.config.use_cache = False, or use_cache=False in a wrapper's call), or use "
                "`pocket llm export` for a chat model with Pocket's own KV cache")
    return ""


class _CallableModule(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def lift(name: str, ep: ExportedProgram, shared: Constants | None = None) -> MethodGraph:
    """Splits an ExportedProgram's placeholders into constants, buffers and user inputs.
    `shared`: the program's constant memo (passes derive packed weights once for all methods)."""
    sig = ep.graph_signature
    graph = ep.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    mutated = {spec.target for spec in sig.output_specs if spec.kind == OutputKind.BUFFER_MUTATION}
    constants, buffers, buffer_values, inputs, state_names = {}, {}, {}, [], {}
    for spec in sig.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            if not isinstance(node.meta.get("val"), torch.Tensor):
                raise ExportError(
                    f"method '{name}': input '{node.name}' is not a tensor; Pocket methods take tensors "
                    "(pass numbers as 0-d tensors)")
            inputs.append(node)
        elif spec.kind == InputKind.BUFFER and spec.target in mutated:
            buffers[node.name] = spec.target
            buffer_values[spec.target] = _state(ep, spec.target)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            constants[node.name] = _state(ep, spec.target).detach()
        else:
            raise ExportError(f"method '{name}': unsupported input kind {spec.kind.name} ('{node.name}')")
        if spec.kind != InputKind.USER_INPUT:
            state_names[node.name] = spec.target

    output_node = next(n for n in graph.nodes if n.op == "output")
    values = list(output_node.args[0])
    mutations, outputs = [], []
    for spec, value in zip(sig.output_specs, values):
        if spec.kind == OutputKind.BUFFER_MUTATION:
            mutations.append((spec.target, value))
        elif spec.kind == OutputKind.USER_OUTPUT:
            outputs.append(value)
        elif spec.kind == OutputKind.USER_INPUT_MUTATION:
            raise ExportError(f"method '{name}' writes to its input '{spec.target}' in place; a program's "
                              "inputs are read-only: compute a new tensor and return it instead")
        elif spec.kind == OutputKind.PARAMETER_MUTATION:
            raise ExportError(f"method '{name}' writes to the parameter '{spec.target}' in place (as "
                              "nn.Embedding(max_norm=...) does, renormalizing the rows it looks up); a "
                              "program's parameters are constants: renormalize the weight once before "
                              "export, or keep changing state in a buffer (register_buffer)")
        else:
            raise ExportError(f"method '{name}': unsupported output kind {spec.kind.name}")
    return MethodGraph(
        name=name, graph=graph, constants=constants, buffers=buffers, buffer_values=buffer_values,
        mutations=mutations, inputs=inputs, outputs=outputs,
        input_spec=tree_spec_json(ep.call_spec.in_spec.child(0)) if ep.call_spec.in_spec else {"type": "tuple", "children": []},
        output_spec=tree_spec_json(ep.call_spec.out_spec),
        ranges=dict(ep.range_constraints), state_names=state_names,
        shared=shared if shared is not None else Constants())


def _state(ep: ExportedProgram, target: str) -> torch.Tensor:
    if target in ep.state_dict:
        return ep.state_dict[target]
    return ep.constants[target]


def _keyed_dict(spec) -> bool:
    """A dict subclass registered as a pytree node whose context is its keys (transformers'
    ModelOutput): the program returns it as a plain dict."""
    context = spec.context
    return (isinstance(spec.type, type) and issubclass(spec.type, dict) and isinstance(context, list)
            and len(context) == spec.num_children and all(isinstance(k, (str, int)) for k in context))


def tree_spec_json(spec) -> dict:
    """A pytree spec as JSON: {"type": "leaf"|"tuple"|"list"|"dict", "children": [...]}."""
    if spec.is_leaf():
        return {"type": "leaf"}
    children = [tree_spec_json(c) for c in spec.children()]
    if spec.type in (dict, collections.OrderedDict) or _keyed_dict(spec):
        # OrderedDict: torchvision's segmentation models; other dict types: transformers' ModelOutput
        return {"type": "dict", "keys": list(spec.context), "children": children}
    if spec.type is list:
        return {"type": "list", "children": children}
    if spec.type is tuple or (isinstance(spec.type, type) and issubclass(spec.type, tuple)):
        return {"type": "tuple", "children": children}
    raise ExportError(f"unsupported input/output container {spec.type!r}: use tensors, tuples, lists or dicts")
