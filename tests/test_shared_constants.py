"""Numbers every language must agree on have one source each, and the copies a language cannot
derive are checked against it here:

    dtypes        schema/program.fbs (ScalarType)  -> DType.java, DType.swift, pocket.h (pk_dtype)
    status codes  error.h (Error), pocket.h         -> PocketException.java, PocketError.swift, Python
    maximum rank  pocket.h (PK_MAX_DIMS)            -> Tensor.java (MAX_DIMS)

(pocket.h's pk_dtype, pk_status and PK_MAX_DIMS are tied to error.h, tensor.h and the generated
schema by static_asserts in c_api.cpp and program.cpp; Swift reads PK_MAX_DIMS from the header.)
"""

import os
import re

from pocket import _native
from pocket.fb.ScalarType import ScalarType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POCKET_H = os.path.join(ROOT, "runtime_core/include/pocket/pocket.h")
JAVA = os.path.join(ROOT, "bindings/java/src/main/java/dev/pocket")
SWIFT = os.path.join(ROOT, "bindings/swift/Sources/Pocket")


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _pairs(pattern, text):
    found = {name: int(value) for name, value in re.findall(pattern, text, re.M)}
    assert found, f"nothing matched {pattern!r}"
    return found


def _schema_dtypes():
    """program.fbs's ScalarType as {"FLOAT32": 0, ...}."""
    return {k.upper(): v for k, v in vars(ScalarType).items() if not k.startswith("_")}


def _c_statuses():
    return _pairs(r"^\s*PK_STATUS_(\w+) = (\d+),", _read(POCKET_H))


def test_pocket_h_dtypes_are_the_schema_enum():
    assert _pairs(r"^\s*PK_DTYPE_(\w+) = (\d+),", _read(POCKET_H)) == _schema_dtypes()


def test_java_dtype_is_the_schema_enum():
    text = _read(os.path.join(JAVA, "DType.java"))
    entries = re.findall(r"^\s*([A-Z0-9]+)\((\d+), (\d+), \"(\w+)\"\)[,;]", text, re.M)
    assert {name: int(code) for name, code, _, _ in entries} == _schema_dtypes()
    for name, _, _, label in entries:
        assert label == name.lower(), f"DType.{name} prints as {label!r}"


def test_swift_dtype_is_the_schema_enum():
    text = _read(os.path.join(SWIFT, "DType.swift"))
    body = text[text.index("public enum DType"):]
    body = body[:body.index("\n}")]
    swift = _pairs(r"^\s*case (\w+) = (\d+)$", body)
    assert {k.upper(): v for k, v in swift.items()} == _schema_dtypes()


def test_java_status_codes_are_pocket_h():
    java = _pairs(r"^\s*public static final int ([A-Z_]+) = (\d+);", _read(os.path.join(JAVA, "PocketException.java")))
    c = _c_statuses()
    del c["OK"]  # Java never raises OK
    assert java == c


def test_swift_status_codes_are_pocket_h():
    text = _read(os.path.join(SWIFT, "PocketError.swift"))
    swift = _pairs(r"^\s*case `?(\w+?)`? = (\d+)$", text)
    snake = {re.sub(r"(?<!^)([A-Z])", r"_\1", k).upper(): v for k, v in swift.items()}
    assert snake == _c_statuses()


def test_python_status_codes_come_from_the_runtime():
    assert _native.STATUS == _c_statuses()


def test_java_max_dims_is_pk_max_dims():
    (c,) = re.findall(r"^#define PK_MAX_DIMS (\d+)$", _read(POCKET_H), re.M)
    (java,) = re.findall(r"public static final int MAX_DIMS = (\d+);", _read(os.path.join(JAVA, "Tensor.java")))
    assert java == c
