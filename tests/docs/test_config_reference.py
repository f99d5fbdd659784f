"""docs/config-reference.md is exactly what the config definitions render (the docs cannot drift)."""

from __future__ import annotations

from tools.config_reference import PAGE, main, render


def test_the_config_reference_page_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), "stale: run python -m tools.config_reference"
    assert main(["--check"]) == 0


def test_the_page_lists_every_component_and_key_it_defines() -> None:
    page = render()
    for heading in ("Topic configs (broker)", "Broker configs (server.properties)",
                    "Connect worker configs (distributed)", "Schema registry settings"):
        assert f"\n## {heading}\n" in page
    for row in ("| `retention.ms` | LONG | `604800000` | [-1,...] |", "| `log.retention.hours` | INT | `168` |",
                "| `group.id` | STRING | *(required)* |", "| `kafkastore.topic` | STRING | `_schemas` |"):
        assert row in page
