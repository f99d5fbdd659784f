"""Generated round-trip tests: every generated message, every version it is generated for.

Random instances are built from each class's ``_FIELDS`` description (what the generator
knows of the JSON spec), restricted to the fields that exist in the version under test,
then encoded, decoded and compared.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
import uuid
from typing import Any

import pytest
import seaway.protocol.messages as messages
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.protocol.primitives import Reader, Writer

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _primitive(kind: str) -> st.SearchStrategy[Any]:
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        return st.integers(lo, hi)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "uuid":
        return st.uuids().map(lambda u: uuid.UUID(int=u.int))
    if kind == "string":
        return st.text(max_size=12)
    if kind in ("bytes", "records"):
        return st.binary(max_size=24)
    raise AssertionError(kind)


def _instance(cls: Any, version: int, module: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for name, typ, lo, hi, nlo, nhi, _tag in cls._FIELDS:
        if not lo <= version <= hi:
            continue
        is_array = typ.startswith("[]")
        elem = typ[2:] if is_array else typ
        if elem in INT_RANGES or elem in ("bool", "float64", "uuid", "string", "bytes", "records"):
            item = _primitive(elem)
        else:
            item = _instance(getattr(module, elem), version, module, depth + 1)
        value = st.lists(item, max_size=2 if depth < 2 else 0) if is_array else item
        if nlo <= version <= nhi and nlo >= 0:
            value = st.none() | value
        parts[name] = value
    return st.builds(cls, **parts)


def _cases() -> list[tuple[str, int]]:
    cases = []
    for info in pkgutil.iter_modules(messages.__path__):
        module = importlib.import_module(f"seaway.protocol.messages.{info.name}")
        top = "".join(p.capitalize() for p in info.name.split("_"))
        cls = getattr(module, top)
        cases += [(info.name, v) for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1)]
    return cases


@pytest.mark.parametrize(("module_name", "version"), _cases())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip(module_name: str, version: int, data: st.DataObject) -> None:
    module = sys.modules.get(f"seaway.protocol.messages.{module_name}") or importlib.import_module(
        f"seaway.protocol.messages.{module_name}"
    )
    cls = getattr(module, "".join(p.capitalize() for p in module_name.split("_")))
    original = data.draw(_instance(cls, version, module))
    w = Writer()
    original.encode(w, version)
    encoded = w.getvalue()
    r = Reader(encoded)
    decoded = cls.decode(r, version)
    assert r.remaining == 0, "decode must consume exactly what encode wrote"
    assert decoded == original
    w2 = Writer()
    decoded.encode(w2, version)
    assert w2.getvalue() == encoded


def test_every_served_api_is_in_the_index() -> None:
    assert set(messages.REQUESTS) == set(messages.RESPONSES)
    for key, cls in messages.REQUESTS.items():
        assert key == cls.API_KEY
        assert dataclasses.is_dataclass(cls)
