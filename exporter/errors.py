"""Errors raised while exporting, with the model source line where one is known."""

import os


class ExportError(ValueError):
    """A model could not be exported; the message names the op or value and its source line."""


def layer_name(node) -> str:
    """'features.3.conv.0 (Conv2d)': the innermost submodule an fx node came from, "" at the top."""
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    path, cls = stack[-1] if stack else ("", "")
    if not path:
        return ""
    cls = cls.__name__ if isinstance(cls, type) else str(cls).rsplit(".", 1)[-1]
    return f"{path} ({cls})"


def source_line(node, default: str = "(source line unknown)") -> str:
    """'model.py:12 in forward: y = torch.foo(x)' for an fx node, from its stack trace.

    Picks the innermost frame outside torch itself, i.e. the user's line.
    """
    trace = node.meta.get("stack_trace") or ""
    lines = trace.strip().splitlines()
    best = ""
    for i, line in enumerate(lines):
        line = line.strip()
        if not line.startswith('File "'):
            continue
        path = line.split('"')[1]
        if f"{os.sep}torch{os.sep}" in path:
            continue
        lineno = line.split(", line ")[1].split(",")[0] if ", line " in line else "?"
        func = line.split(", in ")[-1] if ", in " in line else "?"
        code = lines[i + 1].strip() if i + 1 < len(lines) else ""
        best = f"{os.path.basename(path)}:{lineno} in {func}: {code}"
    return best or default
