"""Scraping helpers for the metrics tests: real HTTP, parsed by prometheus_client's own parser."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

__all__ = ["broker_metrics_url", "sample_value", "scrape"]

_SERVING = re.compile(r"serving Prometheus metrics on (https?://\S+/metrics)")


def broker_metrics_url(output: list[str]) -> str:
    """The /metrics URL a broker subprocess logged at start (its port is ephemeral)."""
    for line in output:
        found = _SERVING.search(line)
        if found:
            return found.group(1)
    raise AssertionError("the broker did not log its metrics listener:\n" + "".join(output[-30:]))


def scrape(url: str, **kwargs: Any) -> dict[str, list[Sample]]:
    """GET ``url`` and parse it; samples grouped by sample name (e.g. ``..._total``, ``..._bucket``)."""
    response = httpx.get(url, timeout=10, **kwargs)
    response.raise_for_status()
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    samples: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
    return samples


def sample_value(samples: dict[str, list[Sample]], name: str, labels: Mapping[str, str] | None = None) -> float | None:
    """The value of the one sample ``name`` whose labels include ``labels``; None when absent."""
    wanted = dict(labels or {})
    found = [s for s in samples.get(name, []) if all(s.labels.get(k) == v for k, v in wanted.items())]
    assert len(found) <= 1, f"{name}{wanted} matches {len(found)} samples: {found}"
    return found[0].value if found else None
