"""Dependencies point down (DESIGN.md): the export side (pocket.exporter, pocket.llm.models)
imports neither the run side nor the compiled runtime, so exporting works where pocket._native
cannot be imported at all."""

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run in a fresh interpreter whose import system refuses pocket._native.
EXPORT_WITHOUT_RUNTIME = r"""
import sys


class NoNative:
    def find_spec(self, name, path=None, target=None):
        if name == "pocket._native":
            raise ImportError("pocket._native is blocked by this test")
        return None


sys.meta_path.insert(0, NoNative())

import torch

import pocket.exporter
from pocket.llm.models import LlmConfig, Transformer, export_llm
from pocket.llm.models.recipe import export_checkpoint

program = pocket.exporter.export(torch.nn.Linear(4, 2), (torch.randn(1, 4),))
assert program.data[:8] == b"POCKETPG", program.data[:8]
config = LlmConfig(vocab_size=32, dim=16, n_layers=1, n_heads=2, n_kv_heads=1, hidden_dim=32, head_dim=8)
llm = export_llm(Transformer(config, max_seq_len=8))
assert llm.method_names == ["prefill", "decode"], llm.method_names
loaded = sorted(m for m in sys.modules if m == "pocket._native" or m == "pocket.runtime")
assert not loaded, loaded
try:
    import pocket.runtime  # the blocker is real: the run side does need the runtime
except ImportError as e:
    assert "blocked by this test" in str(e), e
else:
    raise AssertionError("pocket.runtime imported although pocket._native is blocked")
print("exported without the runtime")
"""


def test_export_side_imports_without_the_compiled_runtime():
    r = subprocess.run([sys.executable, "-P", "-c", EXPORT_WITHOUT_RUNTIME], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("exported without the runtime")


# The modules the export side may import from the pocket namespace: its own and the
# generated schema code.
EXPORT_SIDE = {"exporter": ("pocket.exporter", "pocket.fb"),
               "llm_runner/models": ("pocket.llm.models", "pocket.exporter", "pocket.fb")}


def _pocket_imports(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            names = names[:1] if node.module != "pocket" else names[1:]
        else:
            continue
        for name in names:
            if name == "pocket" or name.startswith("pocket."):
                yield node.lineno, name


def test_export_side_sources_import_nothing_above_them():
    found = []
    for folder, allowed in EXPORT_SIDE.items():
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in files:
                if not f.endswith(".py"):
                    continue
                path = os.path.join(dirpath, f)
                for line, name in _pocket_imports(path):
                    if not any(name == a or name.startswith(a + ".") for a in allowed):
                        found.append(f"{os.path.relpath(path, ROOT)}:{line}: {name}")
    assert not found, "upward imports:\n" + "\n".join(found)
