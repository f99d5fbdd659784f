"""One subject grown version by version: a registry process stays within bounded memory and time.

Each version adds an optional field (what BACKWARD allows), so version n has n fields and
the parsed forms of all versions together grow with n². The registry used to keep every one
of them parsed: 1.46 GB of RSS at 1,000 versions, 141 MB after a restart. Now the parsed
cache is bounded by text size and a BACKWARD check parses only the latest version. Measured
on a real ``seaway registry`` process over a real broker (its RSS from ``/proc``); the
figures at 1,000 versions are in docs/schema-registry.md (``bench/registry.py --growth``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def grown(n: int) -> str:
    fields: list[dict[str, Any]] = [{"name": "id", "type": "long"}]
    fields += [{"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(n)]
    return json.dumps({"type": "record", "name": "Grow", "namespace": "bench", "fields": fields})


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.timeout(300)
def test_a_registry_process_stays_bounded_as_a_subject_grows(tmp_path: Path) -> None:
    """400 versions under BACKWARD (the default): the old registry grew its RSS by ~250 MB here."""
    versions, max_growth_mb = 400, 80
    with BrokerProcess(tmp_path / "broker") as broker, RegistryProcess(broker.bootstrap) as registry, httpx.Client(
        base_url=registry.url, headers=CT, timeout=60
    ) as client:
        assert registry.proc is not None
        assert client.post("/subjects/warm-up/versions", content=json.dumps({"schema": grown(0)})).status_code == 200
        baseline = rss_mb(registry.proc.pid)
        latencies = []
        for n in range(versions):
            started = time.perf_counter()
            r = client.post("/subjects/grow-value/versions", content=json.dumps({"schema": grown(n)}))
            latencies.append(time.perf_counter() - started)
            assert r.status_code == 200, r.text[:300]
        growth = rss_mb(registry.proc.pid) - baseline
        assert client.get("/subjects/grow-value/versions").json() == list(range(1, versions + 1))
        last = sorted(latencies[-50:])
        print(f"{versions} versions, RSS +{growth:.0f} MB, last 50: median {last[25] * 1000:.0f} ms, "
              f"max {last[-1] * 1000:.0f} ms, total {sum(latencies):.1f} s")
        assert growth < max_growth_mb, f"RSS grew {growth:.0f} MB over {versions} versions"
