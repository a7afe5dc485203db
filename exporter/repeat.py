"""Stage 1b: a stack of identical blocks traced once and repeated in the graph.

torch.export spends milliseconds per op in Python, so tracing an LLM's 30 identical decoder
layers is most of its export time. With `repeated="model.layers"` (an nn.ModuleList), export
traces the model with only the first layer and one layer of each distinct kind, then rebuilds
the full stack in the MethodGraph: layer k is a copy of its kind's traced nodes, reading layer
k's own parameters and buffers and the output of layer k-1. The program computes what a trace
of every layer computes, op for op.

Layers are of one kind when their modules have the same classes, the same plain attributes
(ints, floats, strings, dtypes, dataclasses ...) and tensors of the same shapes and dtypes,
and no hooks. The traced graph must also show the shape of a stack: each layer's nodes read
only the previous layer's output, their own state and values shared by all layers (rotary
tables, positions). Anything else (a layer-dependent attribute, an output per layer, a weight
shared between layers) traces every layer, as without `repeated`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import logging
import re

import torch

from pocket.exporter.capture import MethodGraph
from pocket.exporter.errors import ExportError

log = logging.getLogger("pocket.export")


@dataclasses.dataclass
class Stack:
    """How the layers at `path` of `root` are traced: `traced` lists the layer indices kept in
    the trace (layer 0 first, then the first layer of each kind after it); `kind[k]` is the
    position in `traced` of the layer whose nodes layer k copies (k >= 1)."""
    root: torch.nn.Module
    path: str
    n_layers: int
    traced: list[int]
    kind: list[int]


def plan_stack(root: torch.nn.Module, path: str) -> Stack | None:
    """The Stack of root's ModuleList at `path`, or None when tracing every layer is as fast
    (fewer than 3 layers) or the layers cannot be repeated safely (see the module docstring)."""
    layers = _module_list(root, path)
    if len(layers) < 3:
        return None
    seen = {t.data_ptr() for name, t in _tensors(root) if not name.startswith(path + ".")}
    signatures, traced, kind = {}, [0], [0]
    for k, layer in enumerate(layers):
        sig, ptrs = _signature(layer), [t.data_ptr() for _, t in _tensors(layer)]
        if sig is None or not seen.isdisjoint(ptrs) or len(set(ptrs)) < len(ptrs):
            log.info("repeated=%r: layer %d cannot be repeated (hooks, a shared weight or an attribute "
                     "of unknown type); tracing every layer", path, k)
            return None
        seen.update(ptrs)
        if k == 0:
            continue
        if sig not in signatures:
            signatures[sig] = len(traced)
            traced.append(k)
        kind.append(signatures[sig])
    if len(traced) == len(layers):
        return None
    return Stack(root, path, len(layers), traced, kind)


@contextlib.contextmanager
def traced_layers(stack: Stack | None):
    """While open, root's ModuleList holds only the traced layers."""
    if stack is None:
        yield
        return
    parent_path, _, name = stack.path.rpartition(".")
    parent = stack.root.get_submodule(parent_path)
    full = getattr(parent, name)
    setattr(parent, name, torch.nn.ModuleList(full[i] for i in stack.traced))
    try:
        yield
    finally:
        setattr(parent, name, full)


def repeat_layers(mg: MethodGraph, stack: Stack) -> bool:
    """Rebuilds the full stack in `mg`, traced with traced_layers(stack). False (mg unchanged)
    when the graph does not have the shape of a stack; the caller then traces every layer."""
    layout = _Layout.of(mg, stack)
    if layout is None:
        log.info("method '%s': the layers at %r do not form a stack; tracing every layer", mg.name, stack.path)
        return False
    graph = mg.graph
    order = _trace_order(mg, layout)
    traced = [node for own in layout.own[1:] for node in own]  # replaced by the copies' own
    fqns = {node: (mg.state_names[node.name], node.name in mg.buffers) for node in traced}
    for node in traced:
        _forget(mg, node.name)
    erased = [node for nodes in layout.nodes[1:] for node in nodes]
    copied = _Copier(mg, stack, layout, fqns, order)
    x = layout.outputs[0]
    with graph.inserting_before(layout.first_user):
        for k in range(1, stack.n_layers):
            x = copied.layer(k, x)
    layout.outputs[-1].replace_all_uses_with(x, delete_user_cb=lambda user: user not in layout.where)
    at = next((i for i, (_, v) in enumerate(mg.mutations) if layout.where.get(v, 0) > 0), len(mg.mutations))
    kept = [(fqn, v) for fqn, v in mg.mutations if layout.where.get(v, 0) == 0]
    mg.mutations = kept[:at] + copied.mutations + kept[at:]
    output = next(n for n in graph.nodes if n.op == "output")
    output.args = ((*(v for _, v in mg.mutations), *mg.outputs),)
    for node in [*reversed(erased), *traced]:
        graph.erase_node(node)
    mg.buffer_values = {fqn: mg.buffer_values[fqn] for fqn in mg.buffers.values()}
    _sort_placeholders(mg, order)
    names = [n.name for n in graph.nodes]
    if len(set(names)) != len(names):
        raise ExportError(f"method '{mg.name}': repeating the layers at {stack.path!r} gave two values one name")
    graph.lint()
    return True


def _trace_order(mg: MethodGraph, layout: "_Layout") -> dict:
    """A sort key per placeholder of the traced graph: torch lists a block of state per traced
    layer (L0 L1 | other | L0 L1); in a trace of every layer each run of blocks of layers >= 1
    is the blocks of layers 1..n-1 in order. A copy for layer k of placeholder p sorts as
    (key[p][0], k, key[p][2])."""
    key, start, previous = {}, None, 0
    for i, node in enumerate(n for n in mg.graph.nodes if n.op == "placeholder"):
        j = layout.where.get(node, 0)
        if j and not (start is not None and 0 < previous <= j):
            start = i
        key[node] = (start if j else i, 0, i)
        previous = j
    return key


def _sort_placeholders(mg: MethodGraph, key: dict) -> None:
    ordered = sorted((n for n in mg.graph.nodes if n.op == "placeholder"), key=key.__getitem__)
    for before, node in zip(ordered, ordered[1:]):
        before.append(node)


class _Copier:
    """Appends copies of traced layers at the graph's insertion point."""

    def __init__(self, mg: MethodGraph, stack: Stack, layout: "_Layout", fqns: dict, order: dict):
        self.mg, self.stack, self.layout, self.fqns, self.order = mg, stack, layout, fqns, order
        self.state = dict(_tensors(stack.root))
        self.last_placeholder = [n for n in mg.graph.nodes if n.op == "placeholder"][-1]
        self.mutations = []  # (buffer FQN, new value) of the copies, in layer order

    def layer(self, k: int, x: torch.fx.Node) -> torch.fx.Node:
        """Layer k as a copy of its kind's traced layer, reading `x`; returns its output."""
        mg, stack, j = self.mg, self.stack, self.stack.kind[k]
        env = {self.layout.inputs[j]: x}
        for node in self.layout.own[j]:
            old, is_buffer = self.fqns[node]
            fqn = _renamed(old, stack, j, k)
            with mg.graph.inserting_after(self.last_placeholder):
                env[node] = self.last_placeholder = mg.graph.placeholder(_state_name(node.name, stack, j, k))
            env[node].meta = dict(node.meta)
            self.order[env[node]] = (self.order[node][0], k, self.order[node][2])
            mg.state_names[env[node].name] = fqn
            if is_buffer:
                mg.buffers[env[node].name] = fqn
                mg.buffer_values[fqn] = self.state[fqn]
            else:
                mg.constants[env[node].name] = self.state[fqn].detach()
        for node in self.layout.nodes[j]:
            env[node] = mg.graph.node_copy(node, lambda a: env.get(a, a))
            env[node].meta["nn_module_stack"] = _renumbered(node.meta.get("nn_module_stack"), stack, j, k)
        self.mutations += [(_renamed(fqn, stack, j, k), env[v]) for fqn, v in mg.mutations
                           if self.layout.where.get(v) == j]
        return env[self.layout.outputs[j]]


@dataclasses.dataclass
class _Layout:
    """The traced layers in the graph; index j is the position in Stack.traced."""
    nodes: list[list[torch.fx.Node]]   # each layer's op nodes, in graph order
    own: list[list[torch.fx.Node]]     # each layer's parameter and buffer placeholders
    inputs: list[torch.fx.Node | None]  # the previous layer's output each layer reads
    outputs: list[torch.fx.Node]       # each layer's output
    first_user: torch.fx.Node          # the first node after the stack reading its output
    where: dict                        # node -> the traced layer it belongs to

    @classmethod
    def of(cls, mg: MethodGraph, stack: Stack) -> "_Layout | None":
        n = len(stack.traced)
        layer = re.compile(re.escape(stack.path) + r"\.(\d+)(\.|$)")
        nodes, own = [[] for _ in range(n)], [[] for _ in range(n)]
        where = {}
        for node in mg.graph.nodes:
            if node.op == "placeholder":
                m = layer.match(mg.state_names.get(node.name, ""))
                if m:
                    own[int(m[1])].append(node)
                    where[node] = int(m[1])
            elif node.op == "call_function":
                paths = [path for path, _ in (node.meta.get("nn_module_stack") or {}).values()]
                j = next((int(m[1]) for m in map(layer.match, paths) if m), None)
                if j is not None:
                    nodes[j].append(node)
                    where[node] = j
        if not all(nodes):
            return None
        for fqn, value in mg.mutations:  # a layer's buffers take values from that layer
            m = layer.match(fqn)
            if (int(m[1]) if m else None) != where.get(value):
                return None
        inputs, outputs = [None] * n, [None] * n
        for j in range(n):
            for node in own[j]:  # a layer's state is read by that layer only
                if any(where.get(u) != j for u in node.users):
                    return None
            read = {a for node in nodes[j] for a in node.all_input_nodes if where.get(a) != j}
            if any(where.get(a) is not None and where.get(a) != j - 1 for a in read):
                return None
            carried = [a for a in read if where.get(a) == j - 1]
            if j > 0 and len(carried) != 1:
                return None
            inputs[j] = carried[0] if j > 0 else None
            leaving = {node for node in nodes[j] for u in node.users
                       if where.get(u) != j and u.op != "output"}
            if len(leaving) != 1:
                return None
            outputs[j] = leaving.pop()
        for j in range(1, n):  # each output but the last is read by the next layer only
            if outputs[j - 1] is not inputs[j] or any(where.get(u) not in (j - 1, j) for u in outputs[j - 1].users):
                return None
        order = {node: i for i, node in enumerate(mg.graph.nodes)}
        last = max(order[node] for layer_nodes in nodes for node in layer_nodes)
        users = [u for u in outputs[-1].users if u not in where]
        if (not users or any(order[u] < last for u in users)
                or any(v in where for v in mg.outputs if isinstance(v, torch.fx.Node))):
            return None
        return cls(nodes, own, inputs, outputs, min(users, key=order.__getitem__), where)


def _module_list(root: torch.nn.Module, path: str) -> torch.nn.ModuleList:
    try:
        layers = root.get_submodule(path)
    except AttributeError as e:
        raise ExportError(f"repeated={path!r}: the model has no submodule {path!r}") from e
    if not isinstance(layers, torch.nn.ModuleList) or not path:
        raise ExportError(f"repeated={path!r}: expected an nn.ModuleList, found {type(layers).__name__}")
    return layers


def _tensors(module: torch.nn.Module):
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


_PLAIN = (type(None), bool, int, float, str, torch.dtype, torch.device, enum.Enum)
_MODULE_STATE = {"_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "training"}


def _signature(layer: torch.nn.Module):
    """A hashable description of everything a layer's trace depends on, or None when some of
    it cannot be compared (hooks, attributes of other types)."""
    parts = []
    for name, m in layer.named_modules(remove_duplicate=False):
        attrs = []
        for key, value in sorted(vars(m).items()):
            if key in _MODULE_STATE:
                continue
            if key.endswith("_hooks") or key.endswith("_hooks_with_kwargs") or key.endswith("_hooks_always_called"):
                if value:
                    return None
                continue
            if not _plain(value):
                return None
            attrs.append((key, value))
        parts.append((name, type(m), tuple(attrs)))
    for name, t in _tensors(layer):
        parts.append((name, tuple(t.shape), t.stride(), t.dtype, isinstance(t, torch.nn.Parameter)))
    return tuple(parts)


def _plain(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.__dataclass_params__.frozen and all(
            _plain(getattr(value, f.name)) for f in dataclasses.fields(value))
    return isinstance(value, _PLAIN)


def _renamed(fqn: str, stack: Stack, j: int, k: int) -> str:
    """model.layers.1.mlp.up_proj.weight -> model.layers.7.mlp.up_proj.weight (path model.layers)."""
    return f"{stack.path}.{k}.{fqn[len(f'{stack.path}.{j}.'):]}"


def _state_name(name: str, stack: Stack, j: int, k: int) -> str:
    """p_model_layers_1_mlp_up_proj_weight -> p_model_layers_7_mlp_up_proj_weight."""
    flat = stack.path.replace(".", "_")
    return name.replace(f"{flat}_{j}_", f"{flat}_{k}_", 1)


def _renumbered(module_stack: dict | None, stack: Stack, j: int, k: int) -> dict | None:
    """An nn_module_stack with layer j's paths renamed to layer k's (keys are 'L__self__' + path)."""
    if not module_stack:
        return module_stack
    old, new = f"{stack.path}.{j}", f"{stack.path}.{k}"

    def rename(path: str) -> str:
        return new + path[len(old):] if path == old or path.startswith(old + ".") else path

    prefix = "L__self__"
    return {(prefix + rename(key[len(prefix):]) if key.startswith(prefix) else key): (rename(path), cls)
            for key, (path, cls) in module_stack.items()}


def _forget(mg: MethodGraph, name: str) -> None:
    mg.state_names.pop(name, None)
    mg.constants.pop(name, None)
    mg.buffers.pop(name, None)
