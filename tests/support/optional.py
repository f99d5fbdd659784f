"""``present``: the check that turns an Optional a test knows is set into its value.

Client libraries declare many results Optional (confluent-kafka's ``Message.value()``,
``offset()``, ``error()``; a schema's ``field()``) because they are None in some cases a test
has already ruled out. ``present(x)`` asserts that, so the test reads the value with its real
type and fails with a clear message, instead of an AttributeError on None, when it is absent.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["present"]

T = TypeVar("T")


def present(value: T | None, what: str = "value") -> T:
    """``value``, asserting it is not None (``what`` names it in the failure)."""
    assert value is not None, f"expected a {what}, got None"
    return value
