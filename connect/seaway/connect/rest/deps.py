"""How a route reaches the herder: ``app.state.herder``, set by ``create_app``."""

from __future__ import annotations

from fastapi import Request
from seaway.connect.runtime.herder import Herder

__all__ = ["herder_of"]


def herder_of(request: Request) -> Herder:
    herder = request.app.state.herder
    assert isinstance(herder, Herder)
    return herder
