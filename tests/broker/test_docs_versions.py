"""docs/broker.md's table of served protocol versions must match the handler registry."""

from __future__ import annotations

import re
from pathlib import Path

from seaway.broker.handlers import HANDLERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "broker.md"


def test_versions_table_matches_registry() -> None:
    text = DOC.read_text()
    table = text.split("<!-- versions-table -->", 1)[1].split("<!-- /versions-table -->", 1)[0]
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+)-(\d+) \|$", table, re.M)
    documented = {int(key): (name, int(lo), int(hi)) for name, key, lo, hi in rows}
    served = {key: (spec.name, spec.min_version, spec.max_version) for key, spec in HANDLERS.items()}
    assert documented == served
