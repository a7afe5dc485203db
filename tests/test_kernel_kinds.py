"""The exporter takes each argument's kind from the kernel table (runtime_core/kernels/tables):
a table signature that disagrees with an op's call is caught at export, naming op and argument."""

import pytest
import torch

import pocket
from pocket.exporter.supported_ops import SUPPORTED_OPS


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y  # aten::add.Tensor(self, other, alpha=1)


def _export_add():
    return pocket.export(Add(), (torch.randn(2, 3), torch.randn(2, 3)))


def test_table_signature_is_what_emit_follows():
    assert SUPPORTED_OPS["aten::add.Tensor"] == "TTs>T"
    assert _export_add().data[:8] == b"POCKETPG"


def test_argument_that_does_not_fit_the_tables_kind_is_named(monkeypatch):
    monkeypatch.setitem(SUPPORTED_OPS, "aten::add.Tensor", "TTb>T")  # alpha as a bool
    with pytest.raises(pocket.exporter.ExportError, match=r"aten::add\.Tensor: argument 'alpha' is 1, "
                                                          r"which does not fit the kernel table's kind 'b'"):
        _export_add()


def test_tensor_argument_where_the_table_wants_an_int_is_named(monkeypatch):
    monkeypatch.setitem(SUPPORTED_OPS, "aten::add.Tensor", "TiS>T")
    with pytest.raises(pocket.exporter.ExportError, match=r"aten::add\.Tensor: argument 'other' .* kind 'i' \(int\)"):
        _export_add()


def test_argument_count_that_differs_from_the_table_is_named(monkeypatch):
    monkeypatch.setitem(SUPPORTED_OPS, "aten::add.Tensor", "TT>T")
    with pytest.raises(pocket.exporter.ExportError, match=r"aten::add\.Tensor: the kernel table's signature "
                                                          r"TT>T has 2 arguments and 1 outputs, the call has 3 and 1"):
        _export_add()


def _aten_overload(name):
    ns, rest = name.split("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), base), overload or "default")


def test_every_aten_table_signature_has_its_schemas_arity():
    """Each aten op's table signature lists as many arguments and outputs as its torch schema."""
    wrong = []
    for name, sig in SUPPORTED_OPS.items():
        if not name.startswith("aten::"):
            continue
        schema = _aten_overload(name)._schema
        ins, outs = sig.split(">")
        if (len(ins), len(outs)) != (len(schema.arguments), len(schema.returns)):
            wrong.append(f"{name} {sig}: {schema}")
    assert not wrong, "\n".join(wrong)
